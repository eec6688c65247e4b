import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll } from 'vitest';
import { DAEMON_NODE_FLAGS } from '../../daemon/node-flags.js';
import { ownPackage } from '../../daemon/package-root.js';
import { tempDir } from './git.js';

/** What `handoff` runs: package.json's `bin`, the bundle `npm run build` writes (scripts/bundle.mjs). */
export const CLI = ownPackage().cli;

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** The Envelope when --json was given. */
  readonly json: { code: string; data: Record<string, unknown> | null; authority: string; error?: { message: string; hint: string } };
}

/** Runs the built `handoff` CLI as a user would, with the state dir pinned. */
export function cli(stateDir: string, args: readonly string[], cwd?: string): Promise<CliResult> {
  return new Promise((resolve) => {
    // A hang detector (the test's own deadline is the behaviour): a loaded machine slows every CLI start.
    execFile(process.execPath, [CLI, '--state-dir', stateDir, ...args], { cwd, encoding: 'utf8', timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      let json: CliResult['json'] = { code: '', data: null, authority: '' };
      if (args.includes('--json')) json = JSON.parse(stdout) as CliResult['json'];
      resolve({ code, stdout, stderr, json });
    });
  });
}

/** A fresh private state dir whose `config.json` holds `config`: a daemon of its own, as on another machine. */
export function stateDirWith(config: object): string {
  const dir = tempDir('state');
  chmodSync(dir, 0o700);
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  return dir;
}

export interface DaemonProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  readonly token: string;
  readonly stateDir: string;
  /** The Unix socket the CLI and the hooks use (the loopback port serves the dashboard and API scripts). */
  readonly socketPath: string;
  stderr(): string;
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** The daemon ended before it wrote its daemon.json. */
export class DaemonDiedAtStart extends Error {
  constructor(
    readonly code: number | null,
    readonly signal: NodeJS.Signals | null,
    stderr: string,
  ) {
    super(`daemon exited with ${signal ?? code} before it published daemon.json: ${stderr}`);
  }
}

export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** Spawns `handoff daemon` on an ephemeral loopback port and waits for its daemon.json. */
export async function startDaemon(stateDir: string = tempDir('state'), env: NodeJS.ProcessEnv = {}): Promise<DaemonProcess> {
  // With the daemon's flags, as the service unit starts it: the process spawned is the daemon itself, whose
  // pid the tests signal (without them, `handoff daemon` starts node again: daemon/cli/relaunch.ts).
  const child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, CLI, 'daemon', '--state-dir', stateDir, '--port', '0'], {
    // Never the project's checkout: a request naming `/proc/self/cwd` (the fuzz suite sends one) would act on it.
    cwd: tmpdir(),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout?.resume();
  const info = await waitFor('daemon.json', () => {
    // A signal leaves exitCode null: a daemon killed before it published (its own fault point, say) is gone too.
    if (child.exitCode !== null || child.signalCode !== null) throw new DaemonDiedAtStart(child.exitCode, child.signalCode, stderr);
    const path = join(stateDir, 'daemon.json');
    if (!existsSync(path)) return undefined;
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { pid: number; port: number };
    return parsed.pid === child.pid ? parsed : undefined;
  }).catch((error: unknown) => {
    if (error instanceof DaemonDiedAtStart) throw error;
    // Not left running to hold the state dir's lock; it says where it stood: its stderr and the last lines of its log.
    const log = join(stateDir, 'daemon.log');
    const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-15).join('\n') : '(no daemon.log)';
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message} (pid ${child.pid})\nstderr: ${stderr}\ndaemon.log tail:\n${tail}`);
  });
  const token = readFileSync(join(stateDir, 'token'), 'utf8').trim();
  return {
    child,
    pid: info.pid,
    port: info.port,
    token,
    stateDir,
    socketPath: join(stateDir, 'daemon.sock'),
    stderr: () => stderr,
    async kill9() {
      child.kill('SIGKILL');
      await exited(child);
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited(child);
    },
  };
}

export interface RawResponse {
  readonly status: number;
  readonly body: { code: string; data: unknown; authority: string; error?: { message: string; hint: string } };
  readonly text: string;
}

/** A raw HTTP request to the daemon, with full control over headers, for the security tests. */
export function rawRequest(
  port: number,
  options: { method?: string; path: string; headers?: Record<string, string | number>; body?: string | Buffer },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers: options.headers, setHost: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: RawResponse['body'] = { code: '', data: null, authority: '' };
        try {
          body = JSON.parse(text) as RawResponse['body'];
        } catch {
          body = { code: '<not json>', data: text, authority: '' };
        }
        resolve({ status: res.statusCode ?? 0, body, text });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A well-formed authenticated request; tests then break one thing at a time. */
export function api(
  daemon: Pick<DaemonProcess, 'port' | 'token'>,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  headers: Record<string, string | number> = {},
) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return rawRequest(daemon.port, {
    method,
    path,
    body: payload,
    headers: {
      host: `127.0.0.1:${daemon.port}`,
      authorization: `Bearer ${daemon.token}`,
      ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
      ...headers,
    },
  });
}

/** An agent session at work in `repo`: its status line reported a moment ago, so a drain waits for its `handoff drained`. */
export async function agentAtWork(daemon: Pick<DaemonProcess, 'port' | 'token'>, repo: string): Promise<void> {
  const seen = await api(daemon, 'POST', '/v1/signals', { repo, source: 'claude-statusline', metric: 'context', used_percent: 30, executor: 'session-1' });
  if (seen.body.code !== 'reading_recorded') throw new Error(`the agent's reading was not recorded: ${seen.text}`);
}

export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/**
 * One daemon for the tests of a file (or a describe block): started before them in a fresh 0700 state
 * dir, stopped after them. `daemon` may be replaced (a restart); `run` is the CLI with `--json` against it.
 */
export function sharedDaemon(): { daemon: DaemonProcess; run(args: readonly string[], cwd?: string): Promise<CliResult> } {
  const shared = {
    daemon: undefined as unknown as DaemonProcess,
    run: (args: readonly string[], cwd?: string) => cli(shared.daemon.stateDir, [...args, '--json'], cwd),
  };
  beforeAll(async () => {
    shared.daemon = await startDaemon();
  });
  afterAll(async () => {
    await shared.daemon.stop();
  });
  return shared;
}
