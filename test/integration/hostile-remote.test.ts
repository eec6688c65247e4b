import { execFileSync } from 'node:child_process';
import { createHash, randomInt } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { twoClones } from '../support/scenario.js';
import { machineStateDir } from '../support/machine-state.js';

/**
 * Anyone who can push to the shared remote can write `refs/handoff/`. Records crafted there — each
 * field an option, a traversal, a 1 MB value or a wrong type — are refused (74, the field named)
 * before anything of them is used: no command runs, nothing is fetched, nothing is written.
 */
let source: DaemonProcess;
let receiver: DaemonProcess;
let remote: string;
let a: string;
let b: string;
let control: string;
let baseline: { cycle: string; manifest: Record<string, unknown>; handoff: string; lease: Record<string, unknown>; commit: string };
const canary = join(tempDir('canary'), 'ran');
const OPTION = `--upload-pack=touch ${canary}`;
const MEGABYTE = 'a'.repeat(1024 * 1024);

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const freshCycle = () => `20261130T${String(randomInt(100000, 999999))}Z-${Array.from({ length: 6 }, () => BASE32[randomInt(32)]).join('')}`;

function bare(args: string[], input?: string): string {
  return execFileSync('git', args, { cwd: remote, input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).trim();
}

/** A commit holding `files` (nested paths allowed), written straight into the bare remote as an attacker with push rights would. */
function craftCommit(files: Record<string, string>, parent: string | null = null): string {
  type Dir = { [name: string]: string | Dir };
  const root: Dir = {};
  for (const [path, text] of Object.entries(files)) {
    const parts = path.split('/');
    let dir = root;
    for (const part of parts.slice(0, -1)) dir = (dir[part] ??= {}) as Dir;
    dir[parts.at(-1) ?? ''] = text;
  }
  const tree = (dir: Dir): string => {
    const lines = Object.entries(dir).map(([name, value]) =>
      typeof value === 'string' ? `100644 blob ${bare(['hash-object', '-w', '--stdin'], value)}\t${name}` : `040000 tree ${tree(value)}\t${name}`,
    );
    return bare(['mktree'], `${lines.join('\n')}\n`);
  };
  const env = { ...process.env, GIT_AUTHOR_NAME: 'x', GIT_AUTHOR_EMAIL: 'x@x', GIT_COMMITTER_NAME: 'x', GIT_COMMITTER_EMAIL: 'x@x' };
  return execFileSync('git', ['commit-tree', ...(parent ? ['-p', parent] : []), '-m', 'crafted', tree(root)], { cwd: remote, env, encoding: 'utf8' }).trim();
}

type Json = Record<string, unknown>;
const clone = <T>(value: T): T => structuredClone(value);

function setPath(target: Json, path: string, value: unknown): void {
  const keys = path.split('.');
  let node: Json = target;
  for (const key of keys.slice(0, -1)) node = node[key] as Json;
  node[keys.at(-1) ?? ''] = value;
}

/** Publishes a package and an offered lease for a new cycle id, built from the baseline with `edit` applied. */
function publish(edit: { manifest?: (m: Json) => void; lease?: (l: Json) => void }): string {
  const cycle = freshCycle();
  const manifest = clone(baseline.manifest);
  manifest['cycle_id'] = cycle;
  setPath(manifest, 'checkpoint.ref', `refs/heads/handoff/${cycle}`);
  edit.manifest?.(manifest);
  const manifestText = `${JSON.stringify(manifest, null, 2)}\n`;
  const lease = clone(baseline.lease);
  lease['cycle'] = cycle;
  lease['manifest'] = { path: 'manifest.json', sha256: sha256(manifestText) };
  edit.lease?.(lease);
  const pkg = craftCommit({ [`${cycle}/manifest.json`]: manifestText, [`${cycle}/HANDOFF.md`]: baseline.handoff });
  const leaseCommit = craftCommit({ 'lease.json': `${JSON.stringify(lease, null, 2)}\n` });
  bare(['update-ref', `refs/handoff/packages/${cycle}`, pkg]);
  bare(['update-ref', `refs/handoff/lease/${cycle}`, leaseCommit]);
  // The checkpoint is really there under the cycle's branch: a receiver that fetched would get it.
  bare(['update-ref', `refs/heads/handoff/${cycle}`, baseline.commit]);
  return cycle;
}

const userRefs = (repo: string) =>
  git(repo, 'for-each-ref', '--format=%(refname) %(objectname)')
    .split('\n')
    .filter((line) => !line.startsWith('refs/handoff/'))
    .join('\n');
const hasObject = (repo: string, sha: string) => {
  try {
    git(repo, 'cat-file', '-e', `${sha}^{commit}`);
    return true;
  } catch {
    return false;
  }
};

beforeAll(async () => {
  // No periodic lease sync: a background sync begun before a test crafts a record would answer the source's status without it.
  [source, receiver] = await Promise.all([startDaemon(machineStateDir()), startDaemon(machineStateDir())]);
  ({ remote, a, b } = twoClones());
  control = join(tempDir('control'), 'c');
  git(tempDir('x'), 'clone', '-q', remote, control);
  writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
  const now = await cli(source.stateDir, ['now', '--no-wait', '--json'], a);
  expect(now.json.code).toBe('handoff_ready');
  const cycle = (now.json.data?.['cycle'] as { id: string }).id;
  const manifestText = readFileSync(join(a, '.session-handoff', cycle, 'manifest.json'), 'utf8');
  const manifest = JSON.parse(manifestText) as Json;
  const lease = JSON.parse(bare(['show', `refs/handoff/lease/${cycle}:lease.json`])) as Json;
  baseline = {
    cycle,
    manifest,
    handoff: readFileSync(join(a, '.session-handoff', cycle, 'HANDOFF.md'), 'utf8'),
    lease,
    commit: (manifest['checkpoint'] as Json)['commit'] as string,
  };
}, 60_000);

afterAll(async () => {
  await Promise.all([source.stop(), receiver.stop()]);
});

describe('records read from a remote are untrusted input', () => {
  it('a re-keyed copy of a real package verifies (so each refusal below is its one field)', async () => {
    const cycle = publish({});
    const verified = await cli(receiver.stateDir, ['verify', cycle, '--from', 'origin', '--json'], control);
    expect(verified.json.error?.message ?? '').not.toMatch(/refused/);
    expect(['verified', 'diverged']).toContain(verified.json.code);
    expect(hasObject(control, baseline.commit)).toBe(true);
  });

  const manifestCases: [string, string, unknown][] = [];
  for (const field of ['checkpoint.ref', 'checkpoint.remote', 'checkpoint.commit', 'checkpoint.tree', 'cycle_id']) {
    manifestCases.push([field, 'an option', OPTION], [field, 'a traversal', '../../x'], [field, 'a 1 MB value', MEGABYTE], [field, 'a wrong type', 42]);
  }
  // A display string, only compared and shown: any path is a fair remote, but never an option.
  manifestCases.push(
    ['repository.remote_url', 'an option', OPTION],
    ['repository.remote_url', 'a 1 MB value', MEGABYTE],
    ['repository.remote_url', 'a wrong type', 42],
    ['integrity.artifacts', 'a traversal', [{ path: '../../../x', sha256: 'a'.repeat(64) }]],
    ['integrity.artifacts', 'an option', [{ path: OPTION, sha256: 'a'.repeat(64) }]],
    ['checkpoint.mechanism', 'a local ref', 'local_ref'],
    ['trigger.reason', 'a 1 MB value', MEGABYTE],
    ['capsule.next_action', 'a 1 MB value', MEGABYTE],
    ['capsule.next_action', 'a wrong type', { run: OPTION }],
    ['leg', 'a wrong type', 7],
  );

  const leaseCases: [string, string, unknown][] = [
    ['cycle', 'a traversal', '../../x'],
    ['cycle', 'an option', OPTION],
    ['manifest.path', 'a traversal', '../../../../x'],
    ['manifest.path', 'an option', OPTION],
    ['manifest.path', 'a 1 MB value', MEGABYTE],
    ['manifest.sha256', 'a wrong type', 12],
    ['holder', 'a wrong type', 'laptop'],
    ['holder', 'an option', { executor: OPTION, token: 1 }],
    ['at', 'a 1 MB value', MEGABYTE],
    ['last_token', 'a wrong type', '1'],
    ['state', 'an option', OPTION],
  ];

  const cases = [
    ...manifestCases.map(([field, what, value]) => ({ record: 'manifest', field, what, edit: { manifest: (m: Json) => setPath(m, field, value) } })),
    ...leaseCases.map(([field, what, value]) => ({ record: 'lease', field, what, edit: { lease: (l: Json) => setPath(l, field, value) } })),
  ];

  it.each(cases.map((c, i) => [`${c.record}.${c.field}`, c.what, i] as const))(
    '%s set to %s is refused (74, named), runs and fetches nothing',
    async (_name, _what, index) => {
      const item = cases[index];
      if (item === undefined) throw new Error('no case');
      const cycle = publish(item.edit);
      const refsBefore = userRefs(b);
      const command = index % 2 === 0 ? ['verify', cycle, '--from', 'origin'] : ['accept', cycle, '--from', 'origin', '--as', 'laptop-b'];
      const result = await cli(receiver.stateDir, [...command, '--json'], b);
      expect(result.json.code).toBe('corrupt_record');
      expect(result.code).toBe(74);
      const named = item.field.replace(/\.artifacts$/, '.artifacts.0');
      const message = result.json.error?.message ?? '';
      expect(message).toContain(`${item.record}.${named.split('.')[0] ?? ''}`);
      expect(message).toContain(named.split('.').at(-1) ?? '');
      expect(message.length).toBeLessThan(2000);
      expect(existsSync(canary)).toBe(false);
      expect(hasObject(b, baseline.commit)).toBe(false);
      expect(userRefs(b)).toBe(refsBefore);
      expect(existsSync(join(b, '.session-handoff', cycle))).toBe(false);
    },
  );

  it('a return package crafted on the remote is refused by the source, which stays in TAKEOVER and writes nothing', async () => {
    const accepted = await cli(receiver.stateDir, ['accept', baseline.cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout', '--json'], control);
    expect(accepted.json.code).toBe('accepted');
    expect((await cli(source.stateDir, ['status', '--json'], a)).json.data).toMatchObject({ state: 'TAKEOVER' });
    const taken = bare(['rev-parse', `refs/handoff/lease/${baseline.cycle}`]);
    const record = JSON.parse(bare(['show', `${taken}:lease.json`])) as Json;
    const returnManifest = clone(baseline.manifest);
    Object.assign(returnManifest, { leg: 'return' });
    setPath(returnManifest, 'checkpoint.ref', OPTION);
    const text = `${JSON.stringify(returnManifest, null, 2)}\n`;
    const packages = bare(['rev-parse', `refs/handoff/packages/${baseline.cycle}`]);
    const files = {
      [`${baseline.cycle}/manifest.json`]: bare(['show', `${packages}:${baseline.cycle}/manifest.json`]) + '\n',
      [`${baseline.cycle}/HANDOFF.md`]: baseline.handoff,
      [`${baseline.cycle}/return/manifest.json`]: text,
      [`${baseline.cycle}/return/HANDOFF.md`]: baseline.handoff,
    };
    bare(['update-ref', `refs/handoff/packages/${baseline.cycle}`, craftCommit(files, packages)]);
    const offer = { ...record, state: 'return_offered', manifest: { path: 'return/manifest.json', sha256: sha256(text) } };
    bare(['update-ref', `refs/handoff/lease/${baseline.cycle}`, craftCommit({ 'lease.json': `${JSON.stringify(offer, null, 2)}\n` }, taken)]);

    const status = await cli(source.stateDir, ['status', '--json'], a);
    expect(status.json.data).toMatchObject({ state: 'TAKEOVER' });
    expect(String((status.json.data?.['lease_sync'] as Json | undefined)?.['error'])).toContain('manifest.checkpoint.ref');
    expect(existsSync(join(a, '.session-handoff', baseline.cycle, 'return'))).toBe(false);
    expect(existsSync(canary)).toBe(false);
  });
});
