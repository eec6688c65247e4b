import { readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, until, type DaemonProcess } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { busyRepo, commitBlobs, userState, workTreeBlobs } from '../support/scenario.js';
import { plantedSecrets } from '../support/secrets.js';

/*
 * PREPARE's local package (daemon/rehearsal/local-package.ts): the rehearsal writes the snapshot's
 * objects, its commit on a local-only ref and the index that built it; EVACUATE's drain starts from
 * it when it still matches, and otherwise takes its full path. Either way the checkpoint is the work
 * tree as it is at the evacuation, secrets withheld.
 */

const daemons: DaemonProcess[] = [];
afterAll(async () => {
  for (const daemon of daemons) await daemon.stop();
});

async function daemonWith(): Promise<DaemonProcess> {
  const daemon = await startDaemon(tempDir('state'));
  daemons.push(daemon);
  return daemon;
}

const remoteRefs = (bare: string) => git(bare, 'for-each-ref', '--format=%(refname) %(objectname)');

/** `handoff prepare`, then the status once the rehearsal has written its package. */
async function prepareAndPackage(daemon: DaemonProcess, root: string): Promise<void> {
  expect((await cli(daemon.stateDir, ['prepare', '--json'], root)).json.code).toBe('prepare_entered');
  await until(
    'the local package',
    async () => {
      const status = await cli(daemon.stateDir, ['status', '--json'], root);
      const proven = (status.json.data as { way_out: { proven: string[] } }).way_out.proven;
      return proven.includes('snapshot packaged locally') ? true : undefined;
    },
    60_000,
  );
}

interface Evacuated {
  readonly id: string;
  readonly summary: Record<string, unknown>;
  readonly commit: string;
}

async function evacuate(daemon: DaemonProcess, root: string): Promise<Evacuated> {
  const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
  expect(now.json.code).toBe('handoff_ready');
  const cycle = now.json.data?.['cycle'] as { id: string; drain: { steps: { snapshot: { summary: Record<string, unknown> } } } };
  const summary = cycle.drain.steps.snapshot.summary;
  return { id: cycle.id, summary, commit: String(summary['commit']) };
}

/** The checkpoint holds the work tree as git would commit it now, but for the withheld files. */
function expectWorkTree(root: string, remote: string, commit: string, withheld: readonly string[]): void {
  const expected = Object.fromEntries(Object.entries(workTreeBlobs(root)).filter(([path]) => !withheld.includes(path)));
  // On the remote (what a receiver gets), not only here.
  expect(commitBlobs(remote, commit)).toEqual(expected);
}

describe('EVACUATE starts from the local package PREPARE wrote', () => {
  it('reuses it: only what changed since is scanned, a secret written since is withheld, the checkpoint is the work tree', async () => {
    const { root, remote } = busyRepo();
    const daemon = await daemonWith();
    const before = userState(root);
    const remoteBefore = remoteRefs(remote);
    await prepareAndPackage(daemon, root);
    // The rehearsal left the user's things byte-identical and the remote's refs as they were.
    expect(userState(root)).toEqual(before);
    expect(remoteRefs(remote)).toBe(remoteBefore);
    expect(git(root, 'for-each-ref', '--format=%(refname)', 'refs/session-handoff/')).toMatch(/^refs\/session-handoff\/rehearsal\/[0-9a-f]{32}$/);

    // After the rehearsal: a tracked file edited again, one deleted, a new file, a secret.
    writeFileSync(join(root, 'src', 'app.ts'), 'export const a = 4;\n');
    rmSync(join(root, 'AGENTS.md'));
    writeFileSync(join(root, 'src', 'new.ts'), 'export const n = 1;\n');
    writeFileSync(join(root, 'late.env'), plantedSecrets().env);
    // An editor's `git status` rewrites the index's stat data: the package still matches.
    git(root, 'status', '--porcelain');
    const beforeDrain = userState(root);

    const evacuated = await evacuate(daemon, root);
    expect(evacuated.summary).toMatchObject({ rehearsal: 'reused', changed_since_rehearsal: 4, scanned: 3, withheld: 1 });
    expect(evacuated.summary['withheld_paths']).toMatch(/^late\.env /);
    expectWorkTree(root, remote, evacuated.commit, ['late.env']);
    expect(userState(root)).toEqual(beforeDrain);
    // The local package's ref never travels.
    expect(remoteRefs(remote)).not.toContain('session-handoff');
  });

  it('a secret already there at PREPARE stays withheld when the drain carries the verdict', async () => {
    const { root, remote } = busyRepo();
    writeFileSync(join(root, 'early.env'), plantedSecrets().env);
    const daemon = await daemonWith();
    await prepareAndPackage(daemon, root);
    writeFileSync(join(root, 'notes.md'), 'edited after the rehearsal\n');
    const evacuated = await evacuate(daemon, root);
    expect(evacuated.summary).toMatchObject({ rehearsal: 'reused', withheld: 1 });
    expect(evacuated.summary['withheld_paths']).toMatch(/^early\.env /);
    expectWorkTree(root, remote, evacuated.commit, ['early.env']);
  });

  it('falls back to the full path when HEAD or the index moved since the rehearsal', async () => {
    const { root, remote } = busyRepo();
    const daemon = await daemonWith();
    await prepareAndPackage(daemon, root);
    git(root, 'add', 'notes.md');
    const staged = await evacuate(daemon, root);
    expect(staged.summary['rehearsal']).toBe('the index changed since the rehearsal');
    expectWorkTree(root, remote, staged.commit, []);

    const second = busyRepo();
    const other = await daemonWith();
    await prepareAndPackage(other, second.root);
    git(second.root, '-c', 'core.hooksPath=/dev/null', 'commit', '-q', '-m', 'moved on');
    const committed = await evacuate(other, second.root);
    expect(committed.summary['rehearsal']).toBe('HEAD moved since the rehearsal');
    expectWorkTree(second.root, second.remote, committed.commit, []);
  });

  it('never reuses a package a crash left inconsistent: a moved ref or a damaged index is the full path', async () => {
    // What a kill -9 between the next package's update-ref and its record leaves: the ref moved on.
    const moved = busyRepo();
    const first = await daemonWith();
    await prepareAndPackage(first, moved.root);
    const ref = git(moved.root, 'for-each-ref', '--format=%(refname)', 'refs/session-handoff/');
    git(moved.root, 'update-ref', ref, 'HEAD');
    const fromMoved = await evacuate(first, moved.root);
    expect(fromMoved.summary['rehearsal']).toMatch(/^the rehearsal package does not match: the rehearsal ref does not hold the recorded snapshot/);
    expectWorkTree(moved.root, moved.remote, fromMoved.commit, []);

    // A torn index file (a disk that lost its tail).
    const torn = busyRepo();
    const second = await daemonWith();
    await prepareAndPackage(second, torn.root);
    const dir = join(second.stateDir, 'rehearsal');
    const index = readdirSync(dir).find((name) => name.endsWith('.index'));
    expect(index).toBeDefined();
    truncateSync(join(dir, index ?? ''), 100);
    const fromTorn = await evacuate(second, torn.root);
    expect(fromTorn.summary['rehearsal']).toMatch(/^the rehearsal package does not match: the package index is not the one recorded/);
    expectWorkTree(torn.root, torn.remote, fromTorn.commit, []);
  });
});
