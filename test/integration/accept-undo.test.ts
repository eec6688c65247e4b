import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { hook, twoClones } from '../support/scenario.js';
import { machineStateDir } from '../support/machine-state.js';

/**
 * Issue 17, "multi-step operations that cannot half-happen": `accept --checkout` either completes
 * (lease and tree) or leaves the lease where it was. The git failure is a real one that the pre-check
 * cannot foresee: the receiver's repository has a required smudge filter that fails (as a git-lfs
 * filter does where git-lfs is missing). `read-tree -n` writes no file, so the dry run passes; the real
 * `git switch` dies half way, after the lease moved.
 */
/** The source's work holds a file that goes through the `broken` filter once checked out. */
function filteredWork(a: string): void {
  writeFileSync(join(a, '.gitattributes'), '*.bad filter=broken\n');
  writeFileSync(join(a, 'data.bad'), 'smudged on checkout\n');
  writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
}
const breakFilter = (b: string) => {
  git(b, 'config', 'filter.broken.smudge', 'false');
  git(b, 'config', 'filter.broken.required', 'true');
};
const fixFilter = (b: string) => {
  git(b, 'config', 'filter.broken.smudge', 'cat');
  git(b, 'config', 'filter.broken.clean', 'cat');
};

const on = (machine: DaemonProcess, args: string[], repo: string) => cli(machine.stateDir, [...args, '--json'], repo);

describe('accept --checkout that git cannot finish is undone (same machine, no remote chain)', () => {
  let daemon: DaemonProcess;
  beforeAll(async () => {
    daemon = await startDaemon(machineStateDir());
  });
  afterAll(async () => {
    await daemon.stop();
  });

  it('answers 409 checkout_incomplete, the source is HANDOFF_READY again, the token is spent, the next accept gets a higher one; a restart says the same', async () => {
    const base = tempDir('undo');
    const a = join(base, 'a');
    const b = join(base, 'b');
    git(base, 'init', '-q', '-b', 'main', a);
    writeFileSync(join(a, 'f.txt'), 'one\n');
    git(a, 'add', '.');
    git(a, 'commit', '-q', '-m', 'init');
    git(base, 'clone', '-q', a, b);
    git(b, 'remote', 'remove', 'origin');
    filteredWork(a);
    const now = await on(daemon, ['now', '--no-wait'], a);
    expect(now.json.code, JSON.stringify(now.json)).toBe('handoff_ready');
    const cycle = (now.json.data?.['cycle'] as { id: string; remote: unknown }).id;
    breakFilter(b);
    const headBefore = git(b, 'rev-parse', 'HEAD');

    const failed = await on(daemon, ['accept', cycle, '--as', 'first', '--checkout'], b);
    expect(failed.code).toBe(75);
    expect(failed.json).toMatchObject({ code: 'checkout_incomplete', data: { cycle, undone: true, state: 'HANDOFF_READY', left: [] } });
    expect(failed.json.error?.message).toMatch(/smudge filter broken failed/);
    expect(failed.json.error?.message).toMatch(/the accept was undone: the lease is on offer again/);
    expect(failed.json.error?.hint).toContain(`handoff accept ${cycle} --as first\``);
    const spent = Number(failed.json.data?.['token']);

    // The tree is as it was: HEAD, and no file the half switch wrote; nothing was left for B.
    expect(git(b, 'rev-parse', 'HEAD')).toBe(headBefore);
    expect(git(b, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(existsSync(join(b, '.session-handoff', 'lease.json'))).toBe(false);
    const offered = async () => {
      const status = await on(daemon, ['status'], a);
      expect(status.json.data).toMatchObject({
        state: 'HANDOFF_READY',
        cycle: { id: cycle, receiver: null },
        lease: { holder: null, offered: true, last_token: spent },
      });
      expect((await on(daemon, ['status'], b)).json.data).toMatchObject({ state: 'NORMAL', receiving: null });
    };
    await offered();
    // The spent token is stale wherever it is shown.
    expect((await on(daemon, ['lease', 'renew', '--token', String(spent)], a)).json.code).toBe('stale_token');
    expect((await on(daemon, ['return', '--token', String(spent)], b)).json.code).toBe('wrong_state');

    // The journal says the same after a restart.
    await daemon.stop();
    daemon = await startDaemon(daemon.stateDir);
    await offered();

    fixFilter(b);
    const second = await on(daemon, ['accept', cycle, '--as', 'second', '--checkout'], b);
    expect(second.json, JSON.stringify(second.json)).toMatchObject({ code: 'accepted', data: { state: 'TAKEOVER', token: spent + 1 } });
    expect(git(b, 'rev-parse', 'HEAD')).toBe(git(a, 'rev-parse', `refs/heads/handoff/${cycle}`));
  });
});

describe('accept --checkout that git cannot finish is undone on the remote lease chain too (two machines)', () => {
  let machineA: DaemonProcess;
  let machineB: DaemonProcess;
  beforeAll(async () => {
    [machineA, machineB] = await Promise.all([startDaemon(machineStateDir()), startDaemon(machineStateDir())]);
  });
  afterAll(async () => {
    await Promise.all([machineA.stop(), machineB.stop()]);
  });

  it('the chain gets an `offered` child of the `taken` record (last_token kept), both machines see the offer, a second accept takes it with a higher token', async () => {
    const { a, b, remote } = twoClones();
    filteredWork(a);
    const now = await on(machineA, ['now', '--no-wait'], a);
    expect(now.json.code, JSON.stringify(now.json)).toBe('handoff_ready');
    const cycle = (now.json.data?.['cycle'] as { id: string }).id;
    const ref = `refs/handoff/lease/${cycle}`;
    const record = (rev = ref) =>
      JSON.parse(git(remote, 'show', `${rev}:lease.json`)) as { state: string; holder: { executor: string; token: number } | null; last_token: number };
    breakFilter(b);

    const failed = await on(machineB, ['accept', cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout'], b);
    expect(failed.code).toBe(75);
    expect(failed.json).toMatchObject({ code: 'checkout_incomplete', data: { cycle, undone: true, state: 'NORMAL' } });
    expect(failed.json.error?.hint).toContain(`handoff accept ${cycle} --from origin --as laptop-b\``);
    const spent = Number(failed.json.data?.['token']);

    // On the chain: taken by the spent token, then offered again as its child, never forced.
    expect(record()).toMatchObject({ state: 'offered', holder: null, last_token: spent });
    expect(record(`${ref}^`)).toMatchObject({ state: 'taken', holder: { executor: 'laptop-b', token: spent } });
    expect(git(b, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect((await on(machineB, ['status'], b)).json.data).toMatchObject({ state: 'NORMAL', lease: { holder: null, last_token: spent } });
    // The source reads the chain (status syncs it): on offer again, whether or not it had seen the take.
    expect((await on(machineA, ['status'], a)).json.data).toMatchObject({ state: 'HANDOFF_READY', lease: { holder: null, offered: true } });
    expect((await on(machineB, ['lease', 'renew', '--token', String(spent)], b)).json.code).toBe('stale_token');

    await machineB.stop();
    machineB = await startDaemon(machineB.stateDir);
    expect((await on(machineB, ['status'], b)).json.data).toMatchObject({ state: 'NORMAL', lease: { holder: null, last_token: spent } });

    fixFilter(b);
    const second = await on(machineB, ['accept', cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout'], b);
    expect(second.json, JSON.stringify(second.json)).toMatchObject({ code: 'accepted', data: { state: 'TAKEOVER', token: spent + 1 } });
    expect(record()).toMatchObject({ state: 'taken', holder: { executor: 'laptop-b', token: spent + 1 }, last_token: spent + 1 });
    expect((await on(machineA, ['status'], a)).json.data).toMatchObject({ state: 'TAKEOVER', lease: { holder: { executor: 'laptop-b', token: spent + 1 } } });
  });

  it('when the remote refuses the new offer nothing is undone: the lease stays with the receiver, and the command the answer names finishes the move', async () => {
    const { a, b, remote } = twoClones();
    filteredWork(a);
    const now = await on(machineA, ['now', '--no-wait'], a);
    const cycle = (now.json.data?.['cycle'] as { id: string }).id;
    // The remote takes the offer and the take, and refuses an offer that follows a take (a server-side policy).
    hook(
      remote,
      'pre-receive',
      [
        'while read old new ref; do',
        '  case "$ref" in refs/handoff/lease/*)',
        '    if [ "$old" != 0000000000000000000000000000000000000000 ] && git show "$new:lease.json" | grep -q \'"state": "offered"\'; then',
        '      echo "policy: no second offer" >&2; exit 1',
        '    fi;;',
        '  esac',
        'done',
      ].join('\n'),
    );
    breakFilter(b);
    const failed = await on(machineB, ['accept', cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout'], b);
    expect(failed.code).toBe(75);
    expect(failed.json, JSON.stringify(failed.json)).toMatchObject({ code: 'checkout_incomplete', data: { cycle, undone: false } });
    const token = Number(failed.json.data?.['token']);
    expect(failed.json.error?.message).toMatch(
      new RegExp(`could not be offered again on 'origin' \\(the remote rejected the push\\), so it stays yours there with token ${token}`),
    );
    const commit = String(failed.json.data?.['checkpoint']);
    const finish = `cd '${b}' && git switch -c handoff/${cycle} ${commit}`;
    expect(failed.json.error?.hint).toContain(`\`${finish}\``);
    expect(JSON.parse(git(remote, 'show', `refs/handoff/lease/${cycle}:lease.json`))).toMatchObject({ state: 'taken', holder: { token } });
    expect((await on(machineB, ['status'], b)).json.data).toMatchObject({ state: 'TAKEOVER', lease: { holder: { executor: 'laptop-b', token } } });

    fixFilter(b);
    // The command exactly as the answer printed it.
    execFileSync('sh', ['-c', finish], { stdio: 'ignore' });
    expect(git(b, 'rev-parse', 'HEAD')).toBe(commit);
    expect(git(b, 'branch', '--show-current')).toBe(`handoff/${cycle}`);
    expect(git(b, 'status', '--porcelain', '--untracked-files=all')).toBe('');
  });

  it('a receiver that cannot import the cycle (paused) is refused before the chain moves: the lease stays on offer', async () => {
    const { a, b, remote } = twoClones();
    writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
    const now = await on(machineA, ['now', '--no-wait'], a);
    const cycle = (now.json.data?.['cycle'] as { id: string }).id;
    const ref = `refs/handoff/lease/${cycle}`;
    const head = git(remote, 'rev-parse', ref);
    expect((await on(machineB, ['pause', '--reason', 'not now'], b)).json.code).toBe('paused');
    const refused = await on(machineB, ['accept', cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout'], b);
    expect(refused.json.code, JSON.stringify(refused.json)).toBe('paused_denied');
    expect(git(remote, 'rev-parse', ref)).toBe(head);
    expect(JSON.parse(git(remote, 'show', `${ref}:lease.json`))).toMatchObject({ state: 'offered' });
    expect((await on(machineB, ['unpause'], b)).json.code).toBe('unpaused');
    expect((await on(machineB, ['accept', cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout'], b)).json.code).toBe('accepted');
  });
});
