import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, until, type DaemonProcess } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { busyRepo, commitBlobs, userState, workTreeBlobs } from '../support/scenario.js';

/*
 * kill -9 while PREPARE's rehearsal writes its local package (daemon/rehearsal/local-package.ts). The
 * crash point is chosen by the repository itself: a clean filter on one file holds the package's
 * `add` (the step that hashes the work tree) until the test has killed the daemon. What the crash
 * leaves must be nothing a drain could mistake for its own work: the next drain either starts from
 * the last package that still matches or takes its full path, and its checkpoint is the work tree.
 */

const daemons: DaemonProcess[] = [];
afterAll(async () => {
  for (const daemon of daemons) await daemon.stop();
});

const remoteRefs = (bare: string) => git(bare, 'for-each-ref', '--format=%(refname) %(objectname)');

async function packaged(stateDir: string, root: string): Promise<void> {
  await until(
    'the local package',
    async () => {
      const status = await cli(stateDir, ['status', '--json'], root);
      const wayOut = (status.json.data as { way_out: { proven: string[] } }).way_out;
      return wayOut.proven.includes('snapshot packaged locally') ? true : undefined;
    },
    60_000,
  );
}

/**
 * The crash point: a clean filter holds git's `add` of slow.dat while `armed` exists (and says so by
 * creating `held`), so the daemon is killed in the middle of writing the package.
 */
function holdAddOfSlowFile(root: string): { armed: string; held: string } {
  const gate = tempDir('gate');
  const armed = join(gate, 'armed');
  const held = join(gate, 'held');
  git(root, 'config', 'filter.hold.clean', `sh -c 'if [ -e "${armed}" ]; then touch "${held}"; while [ -e "${armed}" ]; do sleep 0.1; done; fi; cat'`);
  writeFileSync(join(root, '.git', 'info', 'attributes'), 'slow.dat filter=hold\n');
  writeFileSync(join(root, 'slow.dat'), 'first\n');
  return { armed, held };
}

describe('kill -9 while the rehearsal writes its local package', () => {
  it('mid-add of a second rehearsal: the first package still matches and is reused, the checkpoint is the work tree', async () => {
    const { root, remote } = busyRepo();
    const { armed, held } = holdAddOfSlowFile(root);
    const remoteBefore = remoteRefs(remote);

    const stateDir = tempDir('state');
    const first = await startDaemon(stateDir);
    expect((await cli(stateDir, ['prepare', '--json'], root)).json.code).toBe('prepare_entered');
    await packaged(stateDir, root);
    const ref = git(root, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/session-handoff/');

    // Changed after the first package; the second rehearsal is killed while it hashes slow.dat.
    writeFileSync(join(root, 'notes.md'), 'notes edited after the first package\n');
    writeFileSync(join(root, 'slow.dat'), 'second\n');
    const before = userState(root);
    writeFileSync(armed, '');
    const doctor = cli(stateDir, ['doctor', '--json'], root).catch(() => null);
    await until('the package add held', async () => (existsSync(held) ? true : undefined), 60_000);
    await first.kill9();
    rmSync(armed);
    await doctor;

    // Nothing of the user's moved, the remote's refs are as they were, the package's ref is the first one's.
    expect(userState(root)).toEqual(before);
    expect(remoteRefs(remote)).toBe(remoteBefore);
    expect(git(root, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/session-handoff/')).toBe(ref);

    const second = await startDaemon(stateDir);
    daemons.push(second);
    const now = await cli(stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code).toBe('handoff_ready');
    const summary = (now.json.data?.['cycle'] as { drain: { steps: { snapshot: { summary: Record<string, unknown> } } } }).drain.steps.snapshot.summary;
    // The first package is still the one its record names, and notes.md and slow.dat changed since it.
    expect(summary).toMatchObject({ rehearsal: 'reused', changed_since_rehearsal: 2 });
    expect(commitBlobs(remote, String(summary['commit']))).toEqual(workTreeBlobs(root));
    expect(userState(root)).toEqual(before);
  });

  it('mid-add of the first rehearsal: no package is left, the drain takes its full path', async () => {
    const { root, remote } = busyRepo();
    const { armed, held } = holdAddOfSlowFile(root);
    writeFileSync(armed, '');
    const before = userState(root);

    const stateDir = tempDir('state');
    const first = await startDaemon(stateDir);
    expect((await cli(stateDir, ['prepare', '--json'], root)).json.code).toBe('prepare_entered');
    await until('the package add held', async () => (existsSync(held) ? true : undefined), 60_000);
    await first.kill9();
    rmSync(armed);
    expect(userState(root)).toEqual(before);
    expect(git(root, 'for-each-ref', 'refs/session-handoff/')).toBe('');

    const second = await startDaemon(stateDir);
    daemons.push(second);
    const now = await cli(stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code).toBe('handoff_ready');
    const summary = (now.json.data?.['cycle'] as { drain: { steps: { snapshot: { summary: Record<string, unknown> } } } }).drain.steps.snapshot.summary;
    expect(summary['rehearsal']).toBe('no rehearsal package');
    expect(commitBlobs(remote, String(summary['commit']))).toEqual(workTreeBlobs(root));
  });
});
