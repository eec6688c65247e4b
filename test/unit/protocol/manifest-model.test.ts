import { describe, expect, it } from 'vitest';
import { buildManifest, EMPTY_CAPSULE, packageFiles, serializeManifest, type ManifestInputs } from '../../../protocol/index.js';
import type { Capsule, ManifestReading } from '../../../schemas/index.js';
import { checkpoint, cycle, repository } from './manifest-fixture.js';

const inputs = (over: Partial<ManifestInputs> = {}): ManifestInputs => ({
  cycle: cycle(),
  leg: 'out',
  revision: 1,
  createdAt: '2026-08-20T10:00:00.000Z',
  predecessor: null,
  source: 's1',
  capsule: null,
  quality: { score: 0, max: 6, missing: ['no capsule'] },
  repository,
  validations: [],
  checkpoint,
  ...over,
});

describe('packageFiles: a revision never overwrites an earlier one', () => {
  it("the out leg's first revision is the contract's manifest.json and HANDOFF.md", () => {
    expect(packageFiles('out', 1)).toEqual({ manifest: 'manifest.json', handoff: 'HANDOFF.md' });
  });

  it('later revisions carry their number; the return leg lives under return/', () => {
    expect(packageFiles('out', 2)).toEqual({ manifest: 'manifest.2.json', handoff: 'HANDOFF.2.md' });
    expect(packageFiles('return', 1)).toEqual({ manifest: 'return/manifest.json', handoff: 'return/HANDOFF.md' });
    expect(packageFiles('return', 3)).toEqual({ manifest: 'return/manifest.3.json', handoff: 'return/HANDOFF.3.md' });
  });
});

describe('buildManifest: every key present, unknowns null or [], never invented', () => {
  it('without a capsule: capsule_source missing, the empty capsule, no destination, no authority, no integrity yet', () => {
    const manifest = buildManifest(inputs());
    expect(manifest).toMatchObject({
      schema_version: 1,
      leg: 'out',
      revision: 1,
      profile: 'emergency-return',
      authority: 'none',
      roles: { source: 's1', destination: null },
      capsule_source: 'missing',
      capsule: EMPTY_CAPSULE,
      capsule_quality: { score: 0, max: 6, missing: ['no capsule'] },
      withheld: [],
      integrity: { artifacts: [] },
      // The fixture's NOW did not wait: no drain wait is recorded yet.
      drain_wait: null,
    });
    expect(manifest).not.toHaveProperty('secret_scan');
    expect(manifest.trigger).toEqual({ kind: 'manual', reason: 'test', readings: [] });
  });

  it("a capsule the agent wrote is the agent's, its missing fields filled from the empty capsule", () => {
    const capsule = { objective: 'ship it', next_action: 'run `npm test`' } as unknown as Capsule;
    const manifest = buildManifest(inputs({ capsule }));
    expect(manifest.capsule_source).toBe('agent');
    expect(manifest.capsule).toEqual({ ...EMPTY_CAPSULE, objective: 'ship it', next_action: 'run `npm test`' });
  });

  it('the drain wait comes from the leg it describes', () => {
    const base = cycle();
    const waited = (why: 'drained' | 'timeout') => ({ ...base.drain, waited: { at: '2026-08-20T10:00:01.000Z', why } });
    const both = { ...base, drain: waited('drained'), return_drain: waited('timeout') };
    expect(buildManifest(inputs({ cycle: both })).drain_wait).toBe('drained');
    expect(buildManifest(inputs({ cycle: both, leg: 'return' })).drain_wait).toBe('timeout');
    expect(buildManifest(inputs({ cycle: { ...both, return_drain: null }, leg: 'return' })).drain_wait).toBeNull();
  });

  it('carries only the schema fields of readings and withheld files, and the secret scan when there is one', () => {
    const base = cycle();
    const reading: ManifestReading = {
      source: 'claude-statusline',
      metric: 'five_hour',
      used_percent: 95,
      resets_at: null,
      observed_at: '2026-08-20T09:59:00.000Z',
      raw_sha256: 'f'.repeat(64),
    };
    // The cycle's reading carries more than the manifest records (who reported it).
    const withExtras = { ...base, trigger: { ...base.trigger, kind: 'telemetry' as const, readings: [{ ...reading, executor: 'e1' }] } };
    const scan = { allow_list: 'read' as const, allowed: ['a.env'], unscanned: [] };
    const manifest = buildManifest(
      inputs({ cycle: withExtras, withheld: [{ path: '.env', rule: 'aws', reason: 'key', extra: 1 } as never], secretScan: scan }),
    );
    expect(manifest.trigger.readings).toEqual([reading]);
    expect(manifest.withheld).toEqual([{ path: '.env', rule: 'aws', reason: 'key' }]);
    expect(manifest.secret_scan).toEqual(scan);
  });

  it("clips a branch, upstream or remote name at the schema's bound with a visible cut; the URL is kept", () => {
    const long = 'b'.repeat(5000);
    const manifest = buildManifest(inputs({ repository: { ...repository, branch: long, upstream: long, remote: long } }));
    expect(manifest.repository.branch).toBe(`${'b'.repeat(999)}…`);
    expect(manifest.repository.upstream).toBe(`${'b'.repeat(999)}…`);
    expect(manifest.repository.remote).toBe(`${'b'.repeat(199)}…`);
    expect(manifest.repository.remote_url).toBe(repository.remote_url);
    const detached = buildManifest(inputs({ repository: { ...repository, branch: null, upstream: null, remote: null } }));
    expect([detached.repository.branch, detached.repository.upstream, detached.repository.remote]).toEqual([null, null, null]);
  });

  it('copies the lists it is given, so a later change to the inputs cannot reach the manifest', () => {
    const validations = [{ command: 'npm test', status: 'passed' as const, exit_code: 0, duration_ms: 5, output_tail: null }];
    const missing = ['no objective'];
    const manifest = buildManifest(inputs({ validations, quality: { score: 5, max: 6, missing } }));
    validations.pop();
    missing.pop();
    expect(manifest.validations).toHaveLength(1);
    expect(manifest.capsule_quality.missing).toEqual(['no objective']);
  });
});

describe('serializeManifest: the bytes the recorded sha256 is of', () => {
  it('is two-space JSON ending in one newline, and parses back to the manifest', () => {
    const manifest = buildManifest(inputs());
    const text = serializeManifest(manifest);
    expect(text).toBe(`${JSON.stringify(manifest, null, 2)}\n`);
    expect(text.startsWith('{\n  "schema_version": 1,\n')).toBe(true);
    expect(JSON.parse(text)).toEqual(manifest);
  });
});
