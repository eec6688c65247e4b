import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { hook, twoClones, userState } from '../support/scenario.js';
import { machineStateDir } from '../support/machine-state.js';

/**
 * Issue 32's journey, typed as a person types it: every command after the first is one the product
 * printed (a `next:` line, a hint), run exactly as printed by a shell with `handoff` on its PATH — the
 * built CLI, `node dist/bin/handoff.js`. Two daemons with their own state dirs stand for two machines.
 */
let machineA: DaemonProcess;
let machineB: DaemonProcess;
let bin: string;

beforeAll(async () => {
  bin = tempDir('bin');
  writeFileSync(join(bin, 'handoff'), `#!/bin/sh\nexec '${process.execPath}' '${CLI}' "$@"\n`);
  chmodSync(join(bin, 'handoff'), 0o755);
  [machineA, machineB] = await Promise.all([startDaemon(machineStateDir()), startDaemon(machineStateDir())]);
});
afterAll(async () => {
  await Promise.all([machineA.stop(), machineB.stop()]);
});

interface Typed {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** One line typed into a shell on `machine`, in `cwd`. */
function type(machine: DaemonProcess, cwd: string, line: string): Promise<Typed> {
  return new Promise((resolve) => {
    const env = {
      ...process.env,
      PATH: `${bin}:${process.env['PATH'] ?? ''}`,
      HANDOFF_STATE_DIR: machine.stateDir,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    };
    execFile('sh', ['-c', line], { cwd, env, encoding: 'utf8', timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

/** The first command of the line starting with `prefix` (`next:`, `hint:`), as the product printed it between backticks. */
function printed(text: string, prefix: string, starts = 'handoff accept'): string {
  const line = text.split('\n').find((l) => l.trimStart().startsWith(prefix)) ?? '';
  const command = [...line.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '').find((c) => c.startsWith(starts) || c.includes(` && ${starts}`));
  expect(command, `no \`${starts}\` on the ${prefix} line of:\n${text}`).toBeDefined();
  return command ?? '';
}

/** `handoff status`'s `next` line, folded across lines, as one. */
const nextOfStatus = (stdout: string): string => {
  const lines = stdout.split('\n');
  const start = lines.findIndex((l) => l.startsWith('next'));
  const folded = [lines[start] ?? ''];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith(' ')) break;
    folded.push(line.trim());
  }
  return folded.join(' ');
};

const cycleOf = (stdout: string): string => /cycle (\d{8}T\d{6}Z-[a-z2-7]{6})/.exec(stdout)?.[1] ?? '';

/** A cycle handed off by A, taken in a fresh clone on B with the command A printed, edited there and returned. */
async function returnedToA(): Promise<{ a: string; remote: string; cycle: string }> {
  const { a, remote } = twoClones();
  writeFileSync(join(a, 'f.txt'), 'one\nfrozen\n');
  const now = await type(machineA, a, 'handoff now --no-wait');
  const cycle = cycleOf(now.stdout);
  const b = join(tempDir('machine-b'), 'b');
  git(tempDir('x'), 'clone', '-q', remote, b);
  expect((await type(machineB, b, printed(now.stdout, 'next:'))).code).toBe(0);
  writeFileSync(join(b, 'f.txt'), 'one\nfrozen\nfrom B\n');
  expect((await type(machineB, b, 'handoff return --no-wait')).code).toBe(0);
  await type(machineA, a, 'handoff status');
  return { a, remote, cycle };
}

describe('the journey across two machines, as typed', () => {
  it('fresh clone: accept --from origin with no other flag; work; return; accept --return brings it home; prune; nothing lost', async () => {
    const { a, remote } = twoClones();
    writeFileSync(join(a, 'f.txt'), 'one\nthe primary, before the freeze\n');
    writeFileSync(join(a, 'notes.md'), 'untracked notes of the primary\n');
    const now = await type(machineA, a, 'handoff now --no-wait --reason "out of quota"');
    expect(now.code, now.stderr).toBe(0);
    const cycle = cycleOf(now.stdout);

    // Machine B: a fresh clone, and the command A printed.
    const b = join(tempDir('machine-b'), 'b');
    git(tempDir('x'), 'clone', '-q', remote, b);
    const acceptLine = printed(now.stdout, 'next:');
    expect(acceptLine).toBe(`handoff accept ${cycle} --from origin`);
    const accepted = await type(machineB, b, acceptLine);
    expect(accepted.code, accepted.stdout + accepted.stderr).toBe(0);
    expect(accepted.stdout).toMatch(/you \(\S+: your login and host name, as --as was not given\) hold the lease/);
    expect(git(b, 'branch', '--show-current')).toBe(`handoff/${cycle}`);
    expect(readFileSync(join(b, 'f.txt'), 'utf8')).toBe('one\nthe primary, before the freeze\n');
    expect(readFileSync(join(b, 'notes.md'), 'utf8')).toBe('untracked notes of the primary\n');
    expect(git(b, 'status', '--porcelain')).toBe('');

    writeFileSync(join(b, 'f.txt'), 'one\nthe primary, before the freeze\nthe receiver’s edit\n');
    writeFileSync(join(b, 'new-from-b.txt'), 'a file the receiver made\n');
    const returned = await type(machineB, b, 'handoff return --no-wait');
    expect(returned.code, returned.stderr).toBe(0);

    // Machine A: the command A's own status prints.
    const status = await type(machineA, a, 'handoff status');
    expect(status.stdout).toMatch(/RETURN_HANDOFF_READY/);
    const back = printed(nextOfStatus(status.stdout), 'next');
    expect(back).toBe(`handoff accept ${cycle} --return`);
    const home = await type(machineA, a, back);
    expect(home.code, home.stdout + home.stderr).toBe(0);
    expect(home.stdout).toMatch(/is CLOSED/);
    expect(readFileSync(join(a, 'f.txt'), 'utf8')).toBe('one\nthe primary, before the freeze\nthe receiver’s edit\n');
    expect(readFileSync(join(a, 'new-from-b.txt'), 'utf8')).toBe('a file the receiver made\n');
    expect(readFileSync(join(a, 'notes.md'), 'utf8')).toBe('untracked notes of the primary\n');
    expect(git(a, 'branch', '--show-current')).toBe('main');

    // The same accept again changes nothing and says why; the work stays.
    const before = userState(a);
    const again = await type(machineA, a, back);
    expect(again.code).not.toBe(0);
    expect(userState(a)).toEqual(before);

    const pruned = await type(machineA, a, 'handoff prune --remote origin');
    expect(pruned.code, pruned.stdout + pruned.stderr).toBe(0);
    expect(userState(a)).toEqual(before);
    expect(git(remote, 'rev-parse', 'refs/heads/main')).toBe(git(a, 'rev-parse', 'refs/remotes/origin/main'));
    expect(readFileSync(join(b, 'f.txt'), 'utf8')).toMatch(/the receiver’s edit/);
  });

  it('a receiver with changes of its own is refused before anything is written; the printed command works', async () => {
    const { a, remote } = twoClones();
    writeFileSync(join(a, 'f.txt'), 'one\nfrom A\n');
    const now = await type(machineA, a, 'handoff now --no-wait');
    const cycle = cycleOf(now.stdout);
    const b = join(tempDir('machine-b'), 'b');
    git(tempDir('x'), 'clone', '-q', remote, b);
    writeFileSync(join(b, 'mine.txt'), 'B’s own unsaved work\n');
    const before = userState(b);
    const refused = await type(machineB, b, printed(now.stdout, 'next:'));
    expect(refused.code).toBe(10);
    expect(userState(b)).toEqual(before);
    expect(existsSync(join(b, '.session-handoff', cycle))).toBe(false);
    const works = printed(refused.stderr, 'hint:', 'git stash');
    expect(works).toBe(`git stash push --include-untracked && handoff accept ${cycle} --from origin`);
    const taken = await type(machineB, b, works);
    expect(taken.code, taken.stdout + taken.stderr).toBe(0);
    expect(git(b, 'branch', '--show-current')).toBe(`handoff/${cycle}`);
    expect(readFileSync(join(b, 'f.txt'), 'utf8')).toBe('one\nfrom A\n');
    expect(git(b, 'stash', 'list')).toMatch(/WIP on main/);
  });

  it('a primary that changed its frozen tree is refused with a way out, never overwritten; the return stays offered', async () => {
    const { a, remote, cycle } = await returnedToA();
    writeFileSync(join(a, 'typed-while-frozen.txt'), 'the primary kept typing\n');
    const before = userState(a);
    const refused = await type(machineA, a, `handoff accept ${cycle} --return`);
    expect(refused.code).toBe(10);
    expect(refused.stderr).toMatch(/changed since it was frozen/);
    expect(refused.stderr).toMatch(new RegExp(`handoff/${cycle}-return`));
    expect(userState(a)).toEqual(before);
    expect(git(remote, 'rev-parse', `refs/heads/handoff/${cycle}-return`)).toMatch(/^[0-9a-f]{40}$/);
    expect((await type(machineA, a, 'handoff status')).stdout).toMatch(/RETURN_HANDOFF_READY/);
  });

  it('a close the remote refuses after the work came home puts the frozen tree back; the same accept later closes', async () => {
    const { a, remote, cycle } = await returnedToA();
    // The remote refuses every push from now on: the close cannot be recorded there.
    hook(remote, 'pre-receive', 'echo "closed for maintenance" >&2; exit 1');
    // The index is rewritten by the moves (same entries, new bytes): its entries are compared, not its bytes.
    const state = () => ({ ...userState(a), index: git(a, 'ls-files', '--stage') });
    const before = state();
    const refused = await type(machineA, a, `handoff accept ${cycle} --return`);
    expect(refused.code, refused.stdout + refused.stderr).not.toBe(0);
    expect(state()).toEqual(before);
    expect((await type(machineA, a, 'handoff status')).stdout).toMatch(/RETURN_HANDOFF_READY/);
    rmSync(join(remote, 'hooks', 'pre-receive'));
    const home = await type(machineA, a, `handoff accept ${cycle} --return`);
    expect(home.code, home.stdout + home.stderr).toBe(0);
    expect(readFileSync(join(a, 'f.txt'), 'utf8')).toBe('one\nfrozen\nfrom B\n');
  });

  it('a paused receiver is refused before anything is written: no manifest, no HANDOFF.md (issue 33, item 12)', async () => {
    const { a, remote } = twoClones();
    writeFileSync(join(a, 'f.txt'), 'one\npaused\n');
    const now = await type(machineA, a, 'handoff now --no-wait');
    const cycle = cycleOf(now.stdout);
    const b = join(tempDir('machine-b'), 'b');
    git(tempDir('x'), 'clone', '-q', remote, b);
    expect((await type(machineB, b, 'handoff pause --reason "not now"')).code).toBe(0);
    const before = userState(b);
    const refused = await type(machineB, b, `handoff accept ${cycle} --from origin --as b`);
    expect(refused.code).toBe(77);
    expect(refused.stderr).toMatch(/paused/);
    expect(existsSync(join(b, '.session-handoff', cycle))).toBe(false);
    expect(userState(b)).toEqual(before);
  });

  it('a checkout of another repository is told where to accept, never to pass --checkout again', async () => {
    const { a, remote } = twoClones();
    writeFileSync(join(a, 'f.txt'), 'one\nidentity\n');
    const cycle = cycleOf((await type(machineA, a, 'handoff now --no-wait')).stdout);
    const other = join(tempDir('other'), 'o');
    mkdirSync(other);
    git(other, 'init', '-q', '-b', 'main');
    writeFileSync(join(other, 'x.txt'), 'another project\n');
    git(other, 'add', '.');
    git(other, 'commit', '-q', '-m', 'unrelated');
    git(other, 'remote', 'add', 'origin', remote);
    const refused = await type(machineB, other, `handoff accept ${cycle} --from origin --checkout`);
    expect(refused.code).toBe(10);
    expect(refused.stderr).toMatch(/another repository/);
    expect(refused.stderr.split('\n').find((l) => l.startsWith('hint:'))).not.toMatch(/--checkout/);
    expect(printed(refused.stderr, 'hint:')).toBe(`handoff accept ${cycle} --from origin`);
  });
});

describe('the journey on one machine, as typed', () => {
  it('another agent in the same checkout, then another checkout of the same daemon: each accepts with the command printed for it', async () => {
    const { a, remote } = twoClones();
    writeFileSync(join(a, 'f.txt'), 'one\nsame machine\n');
    const now = await type(machineA, a, 'handoff now --no-wait');
    const cycle = cycleOf(now.stdout);
    // The same checkout: the command printed "in this checkout".
    const status = nextOfStatus((await type(machineA, a, 'handoff status')).stdout);
    const here = [...status.matchAll(/`([^`]+)`/g)].map((m) => m[1]).find((c) => c === `handoff accept ${cycle}`);
    expect(here, status).toBeDefined();
    const before = userState(a);
    const taken = await type(machineA, a, here ?? '');
    expect(taken.code, taken.stdout + taken.stderr).toBe(0);
    expect(git(a, 'branch', '--show-current')).toBe('main');
    expect(userState(a).files).toEqual(before.files);
    writeFileSync(join(a, 'f.txt'), 'one\nsame machine\nsecond agent\n');
    expect((await type(machineA, a, 'handoff return --no-wait')).code).toBe(0);
    const back = printed(nextOfStatus((await type(machineA, a, 'handoff status')).stdout), 'next');
    expect((await type(machineA, a, back)).code).toBe(0);
    expect(readFileSync(join(a, 'f.txt'), 'utf8')).toBe('one\nsame machine\nsecond agent\n');

    // A new cycle, taken in another checkout on the same machine, by the same daemon.
    writeFileSync(join(a, 'f.txt'), 'one\nsame machine\nsecond agent\nround two\n');
    const second = await type(machineA, a, 'handoff now --no-wait');
    expect(second.code, second.stderr).toBe(0);
    const cycle2 = cycleOf(second.stdout);
    expect(cycle2).not.toBe(cycle);
    const c = join(tempDir('same-machine'), 'c');
    git(tempDir('x'), 'clone', '-q', remote, c);
    const acceptC = await type(machineA, c, printed(second.stdout, 'next:'));
    expect(acceptC.code, acceptC.stdout + acceptC.stderr).toBe(0);
    expect(git(c, 'branch', '--show-current')).toBe(`handoff/${cycle2}`);
    writeFileSync(join(c, 'g.txt'), 'from the other checkout\n');
    expect((await type(machineA, c, 'handoff return --no-wait')).code).toBe(0);
    const home = printed(nextOfStatus((await type(machineA, a, 'handoff status')).stdout), 'next');
    expect(home).toBe(`handoff accept ${cycle2} --return`);
    expect((await type(machineA, a, home)).code).toBe(0);
    expect(readFileSync(join(a, 'g.txt'), 'utf8')).toBe('from the other checkout\n');
    expect(readFileSync(join(a, 'f.txt'), 'utf8')).toBe('one\nsame machine\nsecond agent\nround two\n');
    expect((await type(machineA, a, 'handoff prune --remote origin')).code).toBe(0);
    expect(readFileSync(join(a, 'g.txt'), 'utf8')).toBe('from the other checkout\n');
  });
});
