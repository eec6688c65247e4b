import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, CLI, cli, startDaemon, until, type DaemonProcess } from '../support/daemon.js';
import { git } from '../support/git.js';
import { twoClones } from '../support/scenario.js';
import { slowHttpRemote } from '../support/slow-http-remote.js';

// Issue 23: an accept that ran past the CLI's 15 s was answered daemon_unreachable ("restart the
// daemon") while the daemon went on, pushed `taken` and switched the work tree ~100 s later.
// The remote is slow for real: served over HTTP on 127.0.0.1, every upload-pack request (a listing,
// a fetch) waits first. (A repository's remote.origin.uploadpack no longer can: the daemon pins its own.)
const DELAY_S = 2;
const servers: { close(): Promise<void> }[] = [];

let source: DaemonProcess;
beforeAll(async () => {
  source = await startDaemon();
});
afterAll(async () => {
  await source.stop();
  await Promise.all(servers.map((server) => server.close()));
});

/** A handed-off cycle on a bare remote, and a receiver clone that reaches the remote only through a slow upload-pack. */
async function slowScene(): Promise<{ b: string; remote: string; cycle: string; head: string }> {
  const { a, b, remote } = twoClones();
  writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
  const now = await cli(source.stateDir, ['now', '--no-wait', '--json'], a);
  expect(now.json.code, JSON.stringify(now.json)).toBe('handoff_ready');
  const slow = await slowHttpRemote(remote, DELAY_S);
  servers.push(slow);
  git(b, 'remote', 'set-url', 'origin', slow.url);
  return { b, remote, cycle: (now.json.data?.['cycle'] as { id: string }).id, head: git(b, 'rev-parse', 'HEAD') };
}

/** The built CLI, as a user runs it, with no deadline but the test's own. */
function running(stateDir: string, args: readonly string[], cwd: string) {
  const child = spawn(process.execPath, [CLI, '--state-dir', stateDir, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exit, out: () => stdout, err: () => stderr };
}

type Ops = { operations: { operation: string; what: string; phase: string; committed: boolean }[] };
const operations = async (daemon: DaemonProcess) => ((await api(daemon, 'GET', '/v1/operations')).body.data as Ops).operations;
const leaseState = (remote: string, cycle: string) => (JSON.parse(git(remote, 'show', `refs/handoff/lease/${cycle}:lease.json`)) as { state: string }).state;

describe('a long accept is followed, never reported as a daemon gone', () => {
  it('an accept through a slow remote runs past 15 s: the CLI says what the daemon does meanwhile and gets the answer', async () => {
    const receiver = await startDaemon();
    try {
      const { b, remote, cycle } = await slowScene();
      const run = running(receiver.stateDir, ['accept', '--latest', '--from', 'origin', '--as', 'cloud', '--checkout'], b);
      expect(await run.exit, run.err()).toBe(0);
      expect(run.err()).toMatch(/… still (listing the offers on 'origin'|reading the lease and package of cycle \S+ from 'origin') \(\d+ s\)/);
      expect(run.out()).not.toContain('daemon_unreachable');
      expect(leaseState(remote, cycle)).toBe('taken');
      expect(await operations(receiver)).toEqual([]);
    } finally {
      await receiver.stop();
    }
  }, 120_000);

  it('Ctrl-C before the lease moves cancels the accept: exit 75 interrupted, and nothing moves afterwards', async () => {
    const receiver = await startDaemon();
    try {
      const { b, remote, cycle, head } = await slowScene();
      const run = running(receiver.stateDir, ['accept', '--latest', '--from', 'origin', '--as', 'cloud', '--checkout', '--json'], b);
      const [op] = await until('the accept at work', async () => {
        const live = await operations(receiver);
        return live.length > 0 ? live : undefined;
      });
      expect(op).toMatchObject({ what: 'accept', committed: false });
      run.child.kill('SIGINT');
      expect(await run.exit).toBe(75);
      const answer = JSON.parse(run.out()) as { code: string; error: { message: string; hint: string } };
      expect(answer.code).toBe('interrupted');
      expect(answer.error.message).toContain('cancelled before the lease moved');
      // The daemon ends the request at its next step, before the lease: nothing of it lands later.
      await until('the cancelled accept to end', async () => ((await operations(receiver)).length === 0 ? true : undefined), 60_000);
      expect(leaseState(remote, cycle)).toBe('offered');
      expect(git(b, 'rev-parse', 'HEAD')).toBe(head);
      expect((await cli(receiver.stateDir, ['status', '--json'], b)).json.data?.['state']).not.toBe('TAKEOVER');
    } finally {
      await receiver.stop();
    }
  }, 120_000);

  it('a CLI killed outright (no Ctrl-C handler runs) drops its request, and the daemon cancels the accept before the lease', async () => {
    const receiver = await startDaemon();
    try {
      const { b, remote, cycle, head } = await slowScene();
      const run = running(receiver.stateDir, ['accept', '--latest', '--from', 'origin', '--as', 'cloud', '--checkout', '--json'], b);
      await until('the accept at work', async () => ((await operations(receiver)).length > 0 ? true : undefined));
      run.child.kill('SIGKILL');
      await run.exit;
      await until('the dropped accept to end', async () => ((await operations(receiver)).length === 0 ? true : undefined), 60_000);
      expect(leaseState(remote, cycle)).toBe('offered');
      expect(git(b, 'rev-parse', 'HEAD')).toBe(head);
    } finally {
      await receiver.stop();
    }
  }, 120_000);

  it('a daemon that stops answering (SIGSTOP) is daemon_unreachable; resumed, it moves nothing', async () => {
    const receiver = await startDaemon();
    try {
      const { b, remote, cycle, head } = await slowScene();
      const run = running(receiver.stateDir, ['accept', '--latest', '--from', 'origin', '--as', 'cloud', '--checkout', '--json'], b);
      await until('the accept at work', async () => ((await operations(receiver)).length > 0 ? true : undefined));
      receiver.child.kill('SIGSTOP');
      const code = await run.exit;
      receiver.child.kill('SIGCONT');
      expect(code).toBe(69);
      expect((JSON.parse(run.out()) as { code: string }).code).toBe('daemon_unreachable');
      // What it was doing when it froze is cancelled at its next step: the CLI's answer stays true.
      await until('the dropped accept to end', async () => ((await operations(receiver)).length === 0 ? true : undefined), 60_000);
      expect(leaseState(remote, cycle)).toBe('offered');
      expect(git(b, 'rev-parse', 'HEAD')).toBe(head);
    } finally {
      receiver.child.kill('SIGCONT');
      await receiver.stop();
    }
  }, 120_000);

  it('a daemon that dies during the accept is daemon_unreachable at once, and the lease stays on offer', async () => {
    const receiver = await startDaemon();
    const { b, remote, cycle } = await slowScene();
    const run = running(receiver.stateDir, ['accept', '--latest', '--from', 'origin', '--as', 'cloud', '--json'], b);
    await until('the accept at work', async () => ((await operations(receiver)).length > 0 ? true : undefined));
    await receiver.kill9();
    expect(await run.exit).toBe(69);
    expect((JSON.parse(run.out()) as { code: string }).code).toBe('daemon_unreachable');
    expect(leaseState(remote, cycle)).toBe('offered');
  }, 120_000);
});
