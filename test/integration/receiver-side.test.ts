import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, startDaemon, sharedDaemon } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { twoClones } from '../support/scenario.js';
import { piped } from './ingest-support.js';

const shared = sharedDaemon();
const run = shared.run;
const guard = (repo: string, session: string) =>
  piped(
    ['hook', 'claude-guard', '--state-dir', shared.daemon.stateDir],
    JSON.stringify({
      session_id: session,
      cwd: repo,
      hook_event_name: 'PreToolUse',
      tool_name: 'Edit',
      tool_input: { file_path: join(repo, 'f.txt'), content: 'x' },
    }),
  );

async function handedOff(): Promise<{ a: string; b: string; cycle: string }> {
  const { a, b } = twoClones();
  writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
  const now = await run(['now', '--no-wait'], a);
  expect(now.json.code, JSON.stringify(now.json)).toBe('handoff_ready');
  return { a, b, cycle: (now.json.data?.['cycle'] as { id: string }).id };
}

// Finding 10 of issue 17: before, B said NORMAL / lease free / nothing to do, `lease release` there
// answered 77 "nobody holds the lease", `lease show` printed only `lease_shown`, and the guard admitted anyone.
describe('the receiver is a first-class side (same machine, checkout B)', () => {
  it('status, lease show/renew and the edit guard in B speak of the cycle B took over', async () => {
    const { a, b, cycle } = await handedOff();
    const accepted = await run(['accept', cycle, '--as', 'receiver-session', '--checkout'], b);
    expect(accepted.json).toMatchObject({ code: 'accepted', data: { state: 'TAKEOVER' } });
    const token = Number(accepted.json.data?.['token']);

    const status = await run(['status'], b);
    expect(status.json.data).toMatchObject({
      state: 'TAKEOVER',
      cycle: { id: cycle },
      lease: { holder: { executor: 'receiver-session', token } },
      receiving: { cycle, home: a, checkout: b, holder: { executor: 'receiver-session', token } },
    });
    const next = (status.json.data?.['next'] as { command: string | null }[]).map((n) => n.command);
    expect(next[0]).toMatch(/^handoff (return|close --one-way)/);
    const human = await cli(shared.daemon.stateDir, ['status'], b);
    expect(human.stdout).toMatch(/TAKEOVER/);
    expect(human.stdout).toMatch(/receiving cycle .* from /);
    expect(human.stdout).toMatch(/handoff return/);

    // The lease, from B: shown in words, renewed with the accept's token, a stale token fenced out.
    const shown = await cli(shared.daemon.stateDir, ['lease', 'show'], b);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`held by receiver-session, token ${token}`));
    expect(shown.stdout).toMatch(/TAKEOVER, cycle /);
    expect((await run(['lease', 'show'], b)).json.data).toMatchObject({ workspace: a, checkout: b, state: 'TAKEOVER', cycle, holder: { token } });
    expect((await run(['lease', 'renew', '--token', String(token)], b)).code).toBe(0);
    expect((await run(['lease', 'renew', '--token', String(token + 1)], b)).code).toBe(77);

    // The edit guard in B admits the holder's session only.
    expect((await guard(b, 'receiver-session')).stdout).toBe('{}\n');
    const denied = JSON.parse((await guard(b, 'someone-else')).stdout) as { hookSpecificOutput?: { permissionDecision: string } };
    expect(denied.hookSpecificOutput?.permissionDecision).toBe('deny');
  });

  it('lease release from B acts on the cycle it took over (not "nobody holds the lease")', async () => {
    const { b, cycle } = await handedOff();
    const accepted = await run(['accept', cycle, '--as', 'receiver-session', '--checkout'], b);
    const token = Number(accepted.json.data?.['token']);
    const released = await run(['lease', 'release', '--token', String(token)], b);
    // The cycle travels through the remote: the release is written there first (a `released` record), then here.
    expect(released.json.code).toBe('lease_released');
    const shown = await run(['lease', 'show'], b);
    expect(shown.json.data).toMatchObject({ cycle, holder: null });
    // The released token is spent: it renews nothing.
    expect((await run(['lease', 'renew', '--token', String(token)], b)).code).toBe(77);
  });
});

// Finding 4 of issue 17: before, a git that refused the move after the lease moved answered 500
// (internal_error) with the lease granted for a tree the receiver did not get.
describe('accept --checkout completes (lease and tree) or leaves the lease where it was', () => {
  it('a held index lock in B refuses the accept before the lease moves (409 diverged, exit 10), and a retry completes', async () => {
    const { a, b, cycle } = await handedOff();
    const lock = join(b, '.git', 'index.lock');
    writeFileSync(lock, '');
    const refusedAccept = await run(['accept', cycle, '--as', 'receiver-session', '--checkout'], b);
    expect(refusedAccept.code).toBe(10);
    expect(refusedAccept.json.code).toBe('diverged');
    expect(refusedAccept.json.error?.message).toMatch(/git cannot move the work tree \(.*index\.lock exists.*found before the lease moved/);
    const source = await run(['status'], a);
    expect(source.json.data).toMatchObject({ state: 'HANDOFF_READY', lease: { holder: null, offered: true } });
    expect(existsSync(join(b, '.session-handoff', 'lease.json'))).toBe(false);

    rmSync(lock);
    const accepted = await run(['accept', cycle, '--as', 'receiver-session', '--checkout'], b);
    expect(accepted.json).toMatchObject({ code: 'accepted', data: { state: 'TAKEOVER' } });
    expect(readFileSync(join(b, 'f.txt'), 'utf8')).toBe('one\ntwo\n');
  });
});

// Finding 5 of issue 17: before, a crash between journaling the accept and writing lease.json left
// `handoff return` refused with stale_token "no lease token for this cycle" until --token was passed.
describe('journal and lease.json agree after a crash between them', () => {
  it('accept journaled, lease.json never written, daemon killed: `handoff return` in B needs no --token', async () => {
    const own = await startDaemon();
    const ownRun = (args: string[], cwd: string) => cli(own.stateDir, [...args, '--json'], cwd);
    const { a, b } = twoClones();
    writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
    const now = await ownRun(['now', '--no-wait'], a);
    const cycle = (now.json.data?.['cycle'] as { id: string }).id;
    expect((await ownRun(['accept', cycle, '--as', 'receiver-session', '--checkout'], b)).json.code).toBe('accepted');
    // The state of a crash after the journal line and before the file: the file is not there.
    rmSync(join(b, '.session-handoff', 'lease.json'));
    await own.kill9();
    const again = await startDaemon(own.stateDir);
    try {
      const returned = await cli(again.stateDir, ['return', '--no-wait', '--json'], b);
      expect(returned.json.code).not.toBe('stale_token');
      expect(returned.json.error?.message ?? '').not.toMatch(/no lease token/);
      const home = await cli(again.stateDir, ['status', '--json'], a);
      expect((home.json.data?.['cycle'] as { return_drain: unknown }).return_drain).not.toBeNull();
    } finally {
      await again.stop();
    }
  });
});

// Finding 7 of issue 17: before, a fresh clone with an unborn HEAD had no root commit and was refused as
// "another repository" (diverged), though `--checkout` could lose nothing there.
describe('an unborn-HEAD receiver', () => {
  it('a fresh clone of a remote with no default branch accepts with --checkout, judged by its remote history', async () => {
    const { a, remote } = twoClones();
    git(remote, 'symbolic-ref', 'HEAD', 'refs/heads/unset');
    const c = join(tempDir('unborn'), 'c');
    git(a, 'clone', '-q', remote, c);
    expect(() => git(c, 'rev-parse', '-q', '--verify', 'HEAD')).toThrow();
    writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
    const now = await run(['now', '--no-wait'], a);
    const cycle = (now.json.data?.['cycle'] as { id: string }).id;
    const accepted = await run(['accept', cycle, '--as', 'fresh', '--checkout'], c);
    expect(accepted.json, JSON.stringify(accepted.json.error)).toMatchObject({ code: 'accepted', data: { state: 'TAKEOVER' } });
    const identity = (accepted.json.data?.['checks'] as { name: string; status: string }[]).find((x) => x.name === 'identity');
    expect(identity?.status).toBe('ok');
    expect(readFileSync(join(c, 'f.txt'), 'utf8')).toBe('one\ntwo\n');
  });
});

// issue 17 (remote offers): before, one lease ref that is no cycle id, or one corrupt record, on the
// remote failed `accept --latest --from` for every cycle offered there.
describe('accept --latest --from passes over refs that are not offers', () => {
  it('a foreign ref name and a corrupt lease record beside one real offer: the offer is taken', async () => {
    const machineB = await startDaemon();
    try {
      const { a, b, remote } = twoClones();
      // Anyone who can push names refs: one that is no cycle id, one valid id whose record is garbage.
      const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: a, input: 'not json\n', encoding: 'utf8' }).trim();
      const tree = execFileSync('git', ['mktree'], { cwd: a, input: `100644 blob ${blob}\tlease.json\n`, encoding: 'utf8' }).trim();
      const junk = git(a, 'commit-tree', tree, '-m', 'not a lease');
      git(a, 'push', '-q', remote, `${junk}:refs/handoff/lease/not-a-cycle`, `${junk}:refs/handoff/lease/20200101T000000Z-aaaaaa`);
      writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
      const now = await run(['now', '--no-wait'], a);
      const cycle = (now.json.data?.['cycle'] as { id: string }).id;
      const accepted = await cli(machineB.stateDir, ['accept', '--latest', '--from', 'origin', '--as', 'cloud', '--checkout', '--json'], b);
      expect(accepted.json, JSON.stringify(accepted.json.error)).toMatchObject({ code: 'accepted', data: { cycle, state: 'TAKEOVER' } });
    } finally {
      await machineB.stop();
    }
  });
});
