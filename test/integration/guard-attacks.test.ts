import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { twoClones } from '../support/scenario.js';
import { slowHttpRemote } from '../support/slow-http-remote.js';
import { piped } from './ingest-support.js';

// The guard as the installers write it (`handoff hook claude-guard`, Claude Code's PreToolUse), fed a
// tool call on stdin; the daemons are real, with their own state dirs, over a bare remote.
const DELAY_S = 15;
const servers: { close(): Promise<void> }[] = [];
let source: DaemonProcess;
let receiver: DaemonProcess;

/**
 * A state dir whose daemon reads a travelling lease only when asked (status, the guard): a background
 * sync begun before a test stalls the remote would answer the guard from the fast one.
 */
function stateDirWith(config: object): string {
  const dir = tempDir('state');
  chmodSync(dir, 0o700);
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ lease_sync_seconds: 86_400, ...config }));
  return dir;
}

beforeAll(async () => {
  source = await startDaemon(stateDirWith({}));
  receiver = await startDaemon(stateDirWith({ guard_when_lease_unverified: 'last_known' }));
});
afterAll(async () => {
  await Promise.all([source.stop(), receiver.stop()]);
  await Promise.all(servers.map((server) => server.close()));
});

const toolCall = (cwd: string, session: string, file: string) =>
  JSON.stringify({ session_id: session, cwd, hook_event_name: 'PreToolUse', tool_name: 'Write', tool_input: { file_path: file, content: 'x' } });

async function guard(daemon: DaemonProcess, cwd: string, session: string, file: string) {
  const run = await piped(['hook', 'claude-guard', '--state-dir', daemon.stateDir], toolCall(cwd, session, file));
  expect(run.code).toBe(0);
  const answer = JSON.parse(run.stdout) as { hookSpecificOutput?: { permissionDecision?: string; permissionDecisionReason?: string }; systemMessage?: string };
  return {
    ...answer,
    ms: run.ms,
    denied: answer.hookSpecificOutput?.permissionDecision === 'deny',
    reason: answer.hookSpecificOutput?.permissionDecisionReason ?? '',
  };
}

/** A cycle handed off from `a` to the bare remote; the lease travels through it. */
async function handedOff() {
  const scene = twoClones();
  writeFileSync(join(scene.a, 'f.txt'), 'one\ntwo\n');
  const now = await cli(source.stateDir, ['now', '--no-wait', '--json'], scene.a);
  expect(now.json.code, JSON.stringify(now.json)).toBe('handoff_ready');
  return scene;
}

/** From now on every listing and fetch of `checkout`'s origin waits DELAY_S: a stalled remote. */
async function slowDown(checkout: string, remote: string) {
  const slow = await slowHttpRemote(remote, DELAY_S);
  servers.push(slow);
  git(checkout, 'remote', 'set-url', 'origin', slow.url);
}

describe('the guard covers the git dir of a repository it guards', () => {
  it('a non-holder cannot write .git/config, .git/hooks or the git dir through a link while the work is frozen', async () => {
    const { a } = await handedOff();
    const link = join(tempDir('link'), 'to-git');
    symlinkSync(join(a, '.git'), link);
    mkdirSync(join(a, '.git', 'hooks'), { recursive: true });
    for (const file of [join(a, '.git', 'config'), join(a, '.git', 'hooks', 'pre-commit'), join(a, '.git', 'info', 'new', 'x'), join(link, 'config')]) {
      const answer = await guard(source, a, 'intruder', file);
      expect(answer.denied, `${file}: ${JSON.stringify(answer)}`).toBe(true);
      expect(answer.reason).toContain('HANDOFF_READY');
    }
  });

  it('a linked worktree’s git dir belongs to that worktree, and a path outside any repository stays allowed', async () => {
    const { a } = await handedOff();
    const wt = join(tempDir('wt'), 'linked');
    git(a, 'worktree', 'add', '-q', '--detach', wt);
    // The linked worktree is its own workspace (NORMAL): its git dir is not frozen with `a`.
    expect((await guard(source, wt, 'someone', join(a, '.git', 'worktrees', 'linked', 'HEAD'))).denied).toBe(false);
    expect((await guard(source, wt, 'someone', join(wt, '.git'))).denied).toBe(false);
    const outside = tempDir('outside');
    expect(await guard(source, outside, 'someone', join(outside, 'notes.txt'))).toMatchObject({ denied: false });
  });
});

describe('the guard never waits on the network', () => {
  it('HANDOFF_READY with a stalled remote: a write is refused at once (guard_when_lease_unverified: refuse), never allowed because status is slow', async () => {
    const { a, remote } = await handedOff();
    await slowDown(a, remote);
    const answer = await guard(source, a, 'intruder', join(a, 'f.txt'));
    expect(answer.denied, JSON.stringify(answer)).toBe(true);
    expect(answer.systemMessage).toBeUndefined();
    expect(answer.reason).toMatch(/could not be verified on the remote/);
  }, 120_000);

  it('TAKEOVER with a stalled remote: the holder edits under last_known, others are refused; the source under refuse refuses everyone', async () => {
    const { a, b, remote } = await handedOff();
    const accepted = await cli(receiver.stateDir, ['accept', '--latest', '--from', 'origin', '--as', 'cloud', '--checkout', '--json'], b);
    expect(accepted.json.code, JSON.stringify(accepted.json)).toBe('accepted');
    // The source follows the remote record while the remote is still fast.
    expect((await cli(source.stateDir, ['status', '--json'], a)).json.data?.['state']).toBe('TAKEOVER');
    await slowDown(b, remote);
    await slowDown(a, remote);
    const holder = await guard(receiver, b, 'cloud', join(b, 'f.txt'));
    expect(holder, JSON.stringify(holder)).toMatchObject({ denied: false });
    expect(holder.systemMessage).toBeUndefined();
    const other = await guard(receiver, b, 'intruder', join(b, 'f.txt'));
    expect(other.denied, JSON.stringify(other)).toBe(true);
    const atSource = await guard(source, a, 'cloud', join(a, 'f.txt'));
    expect(atSource.denied, JSON.stringify(atSource)).toBe(true);
    expect(atSource.reason).toMatch(/could not be verified on the remote/);
  }, 180_000);
});
