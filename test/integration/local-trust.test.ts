import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, readFileSync, symlinkSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { helloVerified } from '../../daemon/http/hello.js';
import { compose, FakeClock } from '../fault/support/compose.js';
import { api, cli, rawRequest, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';
import { piped, statuslinePayload } from './ingest-support.js';

/** A plain listener on a port: it records every byte anyone sends it and answers nothing. */
async function squat(port: number): Promise<{ received(): string; connections(): number; close(): Promise<void> }> {
  let received = '';
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections += 1;
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    received: () => received,
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const guardCall = (repo: string) =>
  JSON.stringify({ session_id: 's', cwd: repo, hook_event_name: 'PreToolUse', tool_name: 'Edit', tool_input: { file_path: join(repo, 'README.md') } });

/** `handoff status`, the status-line hook and the guard, as the owner runs them. */
async function ownerCalls(stateDir: string, repo: string) {
  return {
    status: await cli(stateDir, ['status', '--json'], repo),
    statusline: await piped(['hook', 'claude-statusline', '--state-dir', stateDir], statuslinePayload(repo, 50)),
    guard: await piped(['hook', 'claude-guard', '--state-dir', stateDir], guardCall(repo)),
  };
}

describe('the token reaches only the daemon', () => {
  it('the CLI and hooks use a 0600 socket in the 0700 state dir; it goes away on stop', async () => {
    const daemon = await startDaemon();
    const repo = tempRepo();
    try {
      const socket = lstatSync(daemon.socketPath);
      expect(socket.isSocket()).toBe(true);
      expect(socket.mode & 0o777).toBe(0o600);
      expect(lstatSync(daemon.stateDir).mode & 0o777).toBe(0o700);
      const calls = await ownerCalls(daemon.stateDir, repo);
      expect([calls.status.code, calls.status.json.code]).toEqual([0, 'status']);
      expect(calls.statusline.stdout).toMatch(/^handoff NORMAL/);
      expect([calls.guard.code, calls.guard.stdout]).toEqual([0, '{}\n']);
    } finally {
      await daemon.stop();
    }
    expect(existsSync(daemon.socketPath)).toBe(false);
  });

  it.each([
    ['stopped', (daemon: DaemonProcess) => daemon.stop(), /daemon\.json is missing/],
    ['killed (its daemon.json and socket stay behind)', (daemon: DaemonProcess) => daemon.kill9(), /names pid \d+, which is gone/],
  ])('a squatter on the port of a daemon that %s gets nothing: status and hooks say the daemon is not running', async (_how, end, why) => {
    const daemon = await startDaemon();
    const repo = tempRepo();
    await end(daemon);
    const squatter = await squat(daemon.port);
    try {
      const calls = await ownerCalls(daemon.stateDir, repo);
      expect(calls.status.code).toBe(69);
      expect(calls.status.json.code).toBe('daemon_unreachable');
      expect(calls.status.json.error?.message).toMatch(/the daemon is not running/);
      expect(calls.status.json.error?.message).toMatch(why);
      expect([calls.statusline.code, calls.statusline.stdout]).toEqual([0, 'handoff: daemon down\n']);
      // Not enforcing, and saying so to the person (systemMessage), never silently.
      expect([calls.guard.code, JSON.parse(calls.guard.stdout)]).toEqual([0, { systemMessage: 'handoff: daemon down; the lease guard is not enforcing' }]);
      expect(calls.guard.stderr).toMatch(/daemon down/);
      expect(squatter.connections()).toBe(0);
      expect(squatter.received()).not.toContain(daemon.token);
    } finally {
      await squatter.close();
    }
  });

  it('a stale socket left by a killed daemon is replaced by the next one, which has a new token', async () => {
    const first = await startDaemon();
    await first.kill9();
    expect(lstatSync(first.socketPath).isSocket()).toBe(true);
    const second = await startDaemon(first.stateDir);
    try {
      expect(second.token).not.toBe(first.token);
      expect(readFileSync(join(second.stateDir, 'token'), 'utf8')).toBe(second.token);
      expect(lstatSync(second.stateDir).mode & 0o777).toBe(0o700);
      expect((await cli(second.stateDir, ['status', '--json'], tempRepo())).json.code).toBe('status');
      // What a thief copied from the earlier run opens nothing now.
      const stale = await rawRequest(second.port, {
        path: '/v1/status',
        headers: { host: `127.0.0.1:${second.port}`, authorization: `Bearer ${first.token}` },
      });
      expect([stale.status, stale.body.code]).toEqual([401, 'unauthorized']);
    } finally {
      await second.stop();
    }
  });

  it('refuses at start a state dir whose socket path would not fit a Unix socket address', async () => {
    const stateDir = join(tempDir('long'), 'x'.repeat(120 - tempDir('n').length));
    const start = await cli(stateDir, ['daemon', '--json']);
    expect([start.code, start.json.code]).toEqual([64, 'usage_error']);
    expect(start.json.error?.hint).toMatch(/shorter state dir/);
    expect(existsSync(join(stateDir, 'daemon.json'))).toBe(false);
    expect(existsSync(join(stateDir, 'daemon.lock'))).toBe(false);
  });

  it('a new token at every start, also after a clean stop', async () => {
    const first = await startDaemon();
    await first.stop();
    const second = await startDaemon(first.stateDir);
    try {
      expect(second.token).toMatch(/^[0-9a-f]{64}$/);
      expect(second.token).not.toBe(first.token);
      expect(lstatSync(join(second.stateDir, 'token')).mode & 0o777).toBe(0o600);
    } finally {
      await second.stop();
    }
  });

  it('POST /v1/hello proves the daemon to a TCP client before it sends the token', async () => {
    const daemon = await startDaemon();
    try {
      const nonce = randomBytes(24).toString('base64url');
      // No token sent: the client shows it only after the proof checks out.
      const hello = await rawRequest(daemon.port, {
        method: 'POST',
        path: '/v1/hello',
        headers: { host: `127.0.0.1:${daemon.port}`, 'content-type': 'application/json' },
        body: JSON.stringify({ nonce }),
      });
      expect([hello.status, hello.body.code]).toEqual([200, 'ok']);
      const data = hello.body.data as { pid: number; port: number; proof: string };
      expect(data).toMatchObject({ pid: daemon.pid, port: daemon.port });
      expect(helloVerified(daemon.token, { nonce, port: daemon.port, pid: data.pid }, data.proof)).toBe(true);
      // The proof binds the token, the nonce and the port the client dialled: a relay on another port fails.
      expect(helloVerified('0'.repeat(64), { nonce, port: daemon.port, pid: data.pid }, data.proof)).toBe(false);
      expect(helloVerified(daemon.token, { nonce: `${nonce}x`, port: daemon.port, pid: data.pid }, data.proof)).toBe(false);
      expect(helloVerified(daemon.token, { nonce, port: daemon.port + 1, pid: data.pid }, data.proof)).toBe(false);
      // A browser page cannot use it, and every other route still wants the token.
      const fromPage = await api(daemon, 'POST', '/v1/hello', { nonce }, { origin: 'http://evil.example' });
      expect(fromPage.body.code).toBe('forbidden_origin');
      const short = await rawRequest(daemon.port, {
        method: 'POST',
        path: '/v1/hello',
        headers: { host: `127.0.0.1:${daemon.port}`, 'content-type': 'application/json' },
        body: '{"nonce":"short"}',
      });
      expect(short.body.code).toBe('invalid_body');
      const noToken = await rawRequest(daemon.port, { path: '/v1/status', headers: { host: `127.0.0.1:${daemon.port}` } });
      expect(noToken.body.code).toBe('unauthorized');
    } finally {
      await daemon.stop();
    }
  });
});

describe('the CLI checks the state dir and the token file as the daemon does', () => {
  it("refuses a group-readable token with the daemon's exit code and hint; the hooks treat it as no daemon", async () => {
    const daemon = await startDaemon();
    const repo = tempRepo();
    const tokenPath = join(daemon.stateDir, 'token');
    try {
      chmodSync(tokenPath, 0o640);
      const status = await cli(daemon.stateDir, ['status', '--json'], repo);
      expect(status.code).toBe(77);
      expect(status.json.code).toBe('insecure_state_dir');
      expect(status.json.error?.message).toContain('0640');
      expect(status.json.error?.hint).toBe(`chmod 600 '${tokenPath}'`);
      const line = await piped(['hook', 'claude-statusline', '--state-dir', daemon.stateDir], statuslinePayload(repo, 50));
      expect(line.stdout).toBe('handoff: daemon down\n');
      chmodSync(tokenPath, 0o600);
      expect((await cli(daemon.stateDir, ['status', '--json'], repo)).json.code).toBe('status');
    } finally {
      await daemon.stop();
    }
    // The daemon refuses the same file with the same code and hint.
    chmodSync(tokenPath, 0o640);
    const start = await cli(daemon.stateDir, ['daemon', '--json']);
    expect([start.code, start.json.code, start.json.error?.hint]).toEqual([77, 'insecure_state_dir', `chmod 600 '${tokenPath}'`]);
  });

  it('refuses a symlinked state dir, even one leading to a live daemon, and sends it nothing', async () => {
    const daemon = await startDaemon();
    const repo = tempRepo();
    const link = join(tempDir('link'), 'state');
    symlinkSync(daemon.stateDir, link);
    try {
      const status = await cli(link, ['status', '--json'], repo);
      expect(status.code).toBe(77);
      expect(status.json.code).toBe('insecure_state_dir');
      expect(status.json.error?.message).toBe(`${link} is a symlink; it must be a real directory owned by you`);
      const guard = await piped(['hook', 'claude-guard', '--state-dir', link], guardCall(repo));
      expect([JSON.parse(guard.stdout), guard.stderr]).toEqual([
        { systemMessage: expect.stringMatching(/daemon down; the lease guard is not enforcing/) },
        expect.stringMatching(/daemon down/),
      ]);
    } finally {
      await daemon.stop();
    }
  });

  it('refuses a state dir open to others', async () => {
    const daemon = await startDaemon();
    try {
      chmodSync(daemon.stateDir, 0o755);
      const status = await cli(daemon.stateDir, ['status', '--json'], tempRepo());
      expect([status.code, status.json.code, status.json.error?.hint]).toEqual([77, 'insecure_state_dir', `chmod 700 '${daemon.stateDir}'`]);
    } finally {
      chmodSync(daemon.stateDir, 0o700);
      await daemon.stop();
    }
  });
});

describe('the limits are the documented ones (docs/http-api.md, Limits)', () => {
  it('a connection that sends nothing is answered and closed once the headers timeout passes, on both listeners', async () => {
    const daemon = await startDaemon();
    try {
      const silent = (options: { port: number; host: string } | { path: string }) =>
        new Promise<string>((resolve, reject) => {
          let received = '';
          const socket = connect({ ...options, allowHalfOpen: true });
          socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
          socket.on('end', () => {
            socket.destroy();
            resolve(received);
          });
          socket.on('error', reject);
        });
      const [tcp, local] = await Promise.all([silent({ port: daemon.port, host: '127.0.0.1' }), silent({ path: daemon.socketPath })]);
      for (const answer of [tcp, local]) {
        expect(answer).toMatch(/^HTTP\/1\.1 400 /);
        expect(answer).toContain('did not arrive in time');
      }
    } finally {
      await daemon.stop();
    }
  });

  it('on the loopback port and on the socket', async () => {
    // The daemon's own composition (daemon/compose-daemon.ts), built without listening.
    const daemon = await compose({ stateDir: join(tempDir('limits'), 'state'), clock: new FakeClock(Date.now()) });
    const app = daemon.app;
    try {
      for (const [server, maxConnections] of [
        [app.server, 128],
        [app.localSocket, 512],
      ] as const) {
        expect({
          maxConnections: server.maxConnections,
          headersTimeout: server.headersTimeout,
          requestTimeout: server.requestTimeout,
          keepAliveTimeout: server.keepAliveTimeout,
          idleTimeout: server.timeout,
        }).toEqual({ maxConnections, headersTimeout: 10_000, requestTimeout: 30_000, keepAliveTimeout: 5_000, idleTimeout: 0 });
        // An accept that fails for lack of descriptors is an 'error' event: without a listener, a crash.
        expect(server.listenerCount('error')).toBeGreaterThan(0);
      }
    } finally {
      await daemon.close();
    }
  });
});
