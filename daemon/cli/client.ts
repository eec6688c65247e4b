import { lstat } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { failure, fromError, isHandoffError, type Envelope } from '../../protocol/index.js';
import { assertPrivate, isProcessAlive, readClientToken, readDaemonInfo, SOCKET_FILE } from '../store/index.js';
import { isErrno } from '../store/errno.js';
import { socketAnswers, spawnDaemon, waitForDaemon } from './auto-start.js';
import { autoStartRefusal } from './auto-start-policy.js';

export interface CallOptions {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: unknown;
  readonly query?: Record<string, string>;
  readonly timeoutMs?: number;
  /** false: report a daemon that is not running instead of starting one (`handoff daemon stop`). */
  readonly autoStart?: boolean;
}

/** A daemon's start takes about a second; on a loaded machine much more. */
const START_DEADLINE_MS = 20_000;

const notRunning = (stateDir: string, why: string): Envelope =>
  failure('daemon_unreachable', `the daemon is not running for ${stateDir}: ${why}`, 'start it with `handoff daemon` (or pass the --state-dir it uses)');

/** Where the token may go: the daemon's socket, once everything on the way to it passed the daemon's own checks. */
async function reachDaemon(stateDir: string, uid: number): Promise<{ socketPath: string; token: string } | Envelope> {
  const token = await readClientToken(stateDir, uid);
  if (token === null) return notRunning(stateDir, 'the state dir or its token file does not exist');
  const info = await readDaemonInfo(stateDir);
  if (info === null) return notRunning(stateDir, 'daemon.json is missing');
  // A record left by a daemon that died is never used to send anything.
  if (!isProcessAlive(info.pid)) return notRunning(stateDir, `daemon.json names pid ${info.pid}, which is gone (a stale record)`);
  const socketPath = join(stateDir, SOCKET_FILE);
  try {
    assertPrivate(socketPath, await lstat(socketPath), 'socket', uid);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return notRunning(stateDir, `there is no socket ${socketPath}`);
    throw error;
  }
  return { socketPath, token };
}

/**
 * When no daemon answers: start one (detached, see auto-start.ts) unless auto-start is off, and wait
 * until it answers. Several commands doing this at once leave one daemon: the others lose its
 * instance guard and wait for the winner.
 */
async function startOne(stateDir: string, uid: number, down: Envelope): Promise<Awaited<ReturnType<typeof reachDaemon>>> {
  const refusal = await autoStartRefusal(stateDir, process.env);
  if (refusal !== null) {
    return {
      ...down,
      error: {
        message: down.error?.message ?? '',
        hint: `start it with \`handoff daemon\`, or \`handoff service install\` to run it at login (not started by itself: ${refusal})`,
      },
    };
  }
  const started = spawnDaemon(stateDir);
  if (typeof started === 'string') return notRunning(stateDir, `none could be started (${started})`);
  process.stderr.write(`handoff: no daemon answered for ${stateDir}; started one (its output: ${started.log})\n`);
  const answers = async () => 'socketPath' in (await reachDaemon(stateDir, uid)) && (await socketAnswers(stateDir));
  const outcome = await waitForDaemon(started, answers, START_DEADLINE_MS);
  if (outcome.kind === 'up') return reachDaemon(stateDir, uid);
  const why = outcome.kind === 'exited' ? `exited with ${outcome.code ?? 'a signal'}` : `did not answer within ${START_DEADLINE_MS / 1000} s`;
  return failure(
    'daemon_unreachable',
    `no daemon answered for ${stateDir}, and the one started for it ${why}`,
    `see ${started.log} and ${join(stateDir, 'daemon.log')}, or run \`handoff daemon\` to see it fail`,
  );
}

/**
 * The CLI's only way to the daemon: HTTP over the Unix socket in the 0700 state dir, which only the
 * daemon can have created, so the bearer token never goes to whoever holds the loopback port.
 */
export async function callDaemon(stateDir: string, options: CallOptions): Promise<Envelope> {
  let reached: Awaited<ReturnType<typeof reachDaemon>>;
  try {
    const uid = process.getuid?.() ?? 0;
    reached = await reachDaemon(stateDir, uid);
    if (!('socketPath' in reached) && options.autoStart !== false) reached = await startOne(stateDir, uid, reached);
  } catch (error) {
    if (isHandoffError(error)) return fromError(error);
    throw error;
  }
  if (!('socketPath' in reached)) return reached;
  const { socketPath, token } = reached;
  const search = options.query ? `?${new URLSearchParams(options.query).toString()}` : '';
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const timeoutMs = options.timeoutMs ?? 15_000;
  return new Promise((resolve) => {
    const req = request(
      {
        socketPath,
        method: options.method,
        path: `${options.path}${search}`,
        headers: {
          host: 'localhost',
          authorization: `Bearer ${token}`,
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Envelope);
          } catch {
            resolve(
              failure('daemon_unreachable', `${socketPath} answered with something that is not the handoff API`, 'restart the daemon with `handoff daemon`'),
            );
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve(
        error.code === 'ECONNREFUSED' || error.code === 'ENOENT'
          ? notRunning(stateDir, `nothing listens on ${socketPath} (daemon pid gone?)`)
          : failure(
              'daemon_unreachable',
              `no answer from the daemon for ${stateDir}: ${error.message}`,
              'check the daemon log in the state dir, or restart it with `handoff daemon`',
            ),
      ),
    );
    req.end(payload);
  });
}
