import { chmodSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { busyRepo, hook, userState } from '../support/scenario.js';

let daemon: DaemonProcess;
let server: Server;
let authPort = 0;

beforeAll(async () => {
  const stateDir = tempDir('state');
  chmodSync(stateDir, 0o700);
  // A short git timeout keeps the hanging-hook case quick; the daemon's default is 60 s.
  writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ git_timeout_seconds: 3 }));
  daemon = await startDaemon(stateDir);
  // A loopback stand-in for a hosting service that wants credentials (it cannot exist here otherwise).
  server = createServer((_req, res) => {
    res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' });
    res.end('auth required');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  authPort = (server.address() as { port: number }).port;
});
afterAll(async () => {
  await daemon.stop();
  await new Promise((resolve) => server.close(resolve));
});

type Setup = (repo: { root: string; remote: string }) => void;

const cases: [string, Setup, RegExp][] = [
  ['a push rejected by a pre-receive hook', ({ remote }) => hook(remote, 'pre-receive', 'echo "policy: no handoff branches" >&2; exit 1'), /rejected the push/],
  // The daemon runs no hook of the user's repository; the remote's own hooks still run.
  ['a remote whose pre-receive hook hangs', ({ remote }) => hook(remote, 'pre-receive', 'sleep 600'), /timed out after 3 s/],
  [
    'a remote that asks for credentials',
    ({ root }) => git(root, 'remote', 'set-url', 'origin', `http://127.0.0.1:${authPort}/team/repo.git`),
    /asks for credentials and the daemon never prompts/,
  ],
  ['an unreachable remote URL', ({ root }) => git(root, 'remote', 'set-url', 'origin', 'http://127.0.0.1:9/nowhere.git'), /unreachable/],
];

describe('publish faults end in EVACUATE with a specific blocked reason, never HANDOFF_READY', () => {
  it.each(cases)('%s', async (_name, setup, reason) => {
    const repo = busyRepo();
    setup(repo);
    const before = userState(repo.root);
    const started = Date.now();
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], repo.root);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(now.code).toBe(75);
    expect(now.json.code).toBe('drain_blocked');
    expect(now.json.error?.message).toMatch(reason);
    expect(now.json.error?.hint).toMatch(/handoff resume/);

    const status = await cli(daemon.stateDir, ['status', '--json'], repo.root);
    expect(status.json.data).toMatchObject({ state: 'EVACUATE', lease: { offered: false } });
    expect(String(status.json.data?.['blocked'])).toMatch(reason);
    const cycle = status.json.data?.['cycle'] as { drain: { steps: Record<string, unknown> } };
    // A configured remote that fails is never silently replaced by a local ref.
    expect(cycle.drain.steps['publish']).toBeUndefined();
    expect(userState(repo.root)).toEqual(before);
    expect((await cli(daemon.stateDir, ['check', '--json'], repo.root)).code).toBe(1);
  });

  it('after the cause is fixed, handoff resume finishes without redoing finished steps', async () => {
    const repo = busyRepo();
    hook(repo.remote, 'pre-receive', 'exit 1');
    expect((await cli(daemon.stateDir, ['now', '--no-wait', '--json'], repo.root)).code).toBe(75);
    const blocked = (await cli(daemon.stateDir, ['status', '--json'], repo.root)).json.data?.['cycle'] as { drain: { steps: Record<string, { at: string }> } };
    hook(repo.remote, 'pre-receive', 'exit 0');
    const resumed = await cli(daemon.stateDir, ['resume', '--json'], repo.root);
    expect(resumed.json.code).toBe('handoff_ready');
    const done = resumed.json.data?.['cycle'] as { drain: { steps: Record<string, { at: string }> } };
    for (const step of ['inspect', 'validate', 'snapshot']) expect(done.drain.steps[step]?.at).toBe(blocked.drain.steps[step]?.at);
  });
});
