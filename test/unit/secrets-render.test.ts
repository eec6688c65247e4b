import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAjv } from '../../daemon/schema-check.js';
import { buildManifest, createStepScope, includeSecretCommand, initialSnapshot, renderHandoff, step, withheldMarker } from '../../protocol/index.js';
import { ManifestSchema, type Manifest, type RepositoryObservation, type SecretScanRecord, type Withheld } from '../../schemas/index.js';
import { headingsOf, hostileText, markdownBlocks, UNPRINTABLE } from './protocol/hostile-text.js';
import { checkpoint } from './protocol/manifest-fixture.js';
import { POLICY, T0 } from './protocol/machine-harness.js';

const repository: RepositoryObservation = {
  remote: 'origin',
  remote_url: 'https://example.invalid/r.git',
  root_commit: 'a'.repeat(40),
  branch: 'main',
  head: 'b'.repeat(40),
  upstream: null,
  ahead: null,
  behind: null,
  dirty: { staged: [], unstaged: ['config.ts'], untracked: ['.env'] },
  operation_in_progress: null,
  instructions: [],
};

function manifestWith(withheld?: readonly Withheld[], secretScan?: SecretScanRecord): Manifest {
  const fresh = initialSnapshot({ root: '/repo', policy: POLICY, profile: 'emergency-return', at: T0 });
  const { next } = step(createStepScope(fresh), fresh, {
    type: 'NOW',
    reason: 'test',
    wait: false,
    at: T0,
    entropy: 'abcdef',
  });
  const cycle = next.context.cycle;
  if (cycle === null) throw new Error('no cycle');
  return buildManifest({
    cycle,
    leg: 'out',
    revision: 1,
    createdAt: '2026-08-20T10:00:00.000Z',
    predecessor: null,
    source: null,
    capsule: null,
    quality: { score: 0, max: 6, missing: [] },
    repository,
    validations: [],
    checkpoint,
    ...(withheld && { withheld }),
    ...(secretScan && { secretScan }),
  });
}

const validate = createAjv().compile<Manifest>(ManifestSchema);
const AWS = { path: '.env', rule: '@secretlint/secretlint-rule-aws', reason: 'secretlint: AWSSecretAccessKey on line 2' };

describe('withheld[] in the manifest and HANDOFF.md', () => {
  it('validates with the field, and a package made before it (no withheld key) still validates', () => {
    const manifest = manifestWith([AWS]);
    expect(validate(structuredClone(manifest))).toBe(true);
    const { withheld, ...old } = manifest;
    expect(withheld).toEqual([AWS]);
    expect(validate(structuredClone(old))).toBe(true);
    expect(manifestWith().withheld).toEqual([]);
    expect(validate({ ...manifest, withheld: [{ ...AWS, secret: 'x' }] })).toBe(false);
  });

  it("opens HANDOFF.md with the daemon's block and one include command per file; nothing when nothing was withheld", () => {
    const text = renderHandoff(
      manifestWith([AWS, { path: "it's key.pem", rule: '@secretlint/secretlint-rule-privatekey', reason: 'secretlint: PrivateKey on line 1' }]),
    );
    const headings = headingsOf(markdownBlocks(text));
    expect(headings.slice(0, 3)).toEqual([
      '# Handoff 20260820T100000Z-abcdef (out leg, revision 1)',
      '## Withheld: files that hold a secret',
      '## Next action',
    ]);
    expect(text).toContain("mkdir -p .session-handoff && printf '%s\\n' '.env' >> .session-handoff/allow-secrets");
    expect(text).toContain(`mkdir -p .session-handoff && printf '%s\\n' 'it'\\''s key.pem' >> .session-handoff/allow-secrets`);
    expect(headingsOf(markdownBlocks(renderHandoff(manifestWith())))).not.toContain('## Withheld: files that hold a secret');
  });

  it('a hostile path stays inside its code span and its command line: no heading, no fence, nothing unprintable', () => {
    fc.assert(
      fc.property(hostileText, (path) => {
        const text = renderHandoff(manifestWith([{ ...AWS, path }]));
        const blocks = markdownBlocks(text);
        expect(headingsOf(blocks).filter((h) => h.startsWith('## Withheld'))).toHaveLength(1);
        expect(headingsOf(blocks).filter((h) => h.startsWith('# '))).toHaveLength(1);
        // Recovery, keeping local changes, and the include commands.
        expect(blocks.filter((b) => b.kind === 'fence' && b.info === 'sh')).toHaveLength(3);
        expect(text).not.toMatch(UNPRINTABLE);
        expect(includeSecretCommand(path).split('\n')).toHaveLength(1);
      }),
      { numRuns: 300 },
    );
  });

  it('lists allowed and unscanned files and an ignored allow list; a name holding a secret has its marker and no include command', () => {
    const marked = `keys/${withheldMarker('@secretlint/secretlint-rule-github')}.txt`;
    const manifest = manifestWith([AWS, { path: marked, rule: '@secretlint/secretlint-rule-github', reason: 'secretlint: GITHUB_TOKEN in the file name' }], {
      allow_list: 'ignored',
      allowed: ['dev.env'],
      unscanned: [{ path: 'logo.png', why: 'binary' }],
    });
    expect(validate(structuredClone(manifest))).toBe(true);
    const text = renderHandoff(manifest);
    expect(text).toContain(`- \`${marked}\`: \`@secretlint/secretlint-rule-github\``);
    expect(text.split('\n').filter((line) => line.startsWith('mkdir -p .session-handoff'))).toEqual([
      "mkdir -p .session-handoff && printf '%s\\n' '.env' >> .session-handoff/allow-secrets",
    ]);
    expect(text).toContain('Pushed on purpose although the scan found a secret in them');
    expect(text).toContain('- `dev.env`');
    expect(text).toContain('- `logo.png`: binary');
    expect(text).toContain('was ignored: it is tracked or in a commit, so the remote could have written it');
    // Nothing withheld, something unscanned: the block still says so, under its own heading.
    const quiet = renderHandoff(manifestWith([], { allow_list: 'absent', allowed: [], unscanned: [{ path: 'big.txt', why: 'too_large' }] }));
    expect(headingsOf(markdownBlocks(quiet))).toContain('## Secret scan');
    expect(quiet).toContain('- `big.txt`: larger than secret_scan.max_file_bytes');
    expect(validate({ ...manifest, secret_scan: { ...manifest.secret_scan, allow_list: 'upstream' } })).toBe(false);
  });
});
