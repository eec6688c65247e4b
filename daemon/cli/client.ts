import { randomUUID } from 'node:crypto';
import { lstat } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { failure, fromError, type Envelope } from '../../protocol/envelope.js';
import { isHandoffError } from '../../protocol/errors.js';
import { readDaemonInfo, SOCKET_FILE } from '../store/daemon-info.js';
import { assertPrivate } from '../store/private-path.js';
import { isProcessAlive } from '../store/process-liveness.js';
import { STATE_DIR_HINT } from '../store/make-dirs.js';
import { readClientToken } from '../store/state-dir.js';
import { isErrno } from '../store/errno.js';
import { OPERATION_HEADER, type OperationView } from '../operations/index.js';
import { socketAnswers, spawnDaemon, waitForDaemon } from './auto-start.js';

export interface CallOptions {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: unknown;
  readonly query?: Record<string, string>;
  readonly timeoutMs?: number;
  /** false: report a daemon that is not running instead of starting one (`handoff daemon stop`). */
  readonly autoStart?: boolean;
  /** A long request (accept, verify): followed while the daemon works on it, with no deadline of its own. */
  readonly follow?: Follow;
}

export interface Follow {
  /** One line of what the daemon is doing now, for a person. */
  progress(line: string): void;
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
  // Loaded only when no daemon answered: it reads config.json through the compiled validators.
  const { autoStartRefusal } = await import('./auto-start-policy.js');
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
  if ('refused' in started)
    return started.unusable
      ? failure('state_dir_unusable', started.refused, STATE_DIR_HINT)
      : notRunning(stateDir, `none could be started (${started.refused})`);
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
  return options.follow === undefined ? send(stateDir, reached, options).answer : follow(stateDir, reached, options, options.follow);
}

interface Sent {
  readonly answer: Promise<Envelope>;
  /** Ends the request: its answer is then `instead`. */
  abandon(instead: Envelope): void;
}

function send(stateDir: string, { socketPath, token }: { socketPath: string; token: string }, options: CallOptions, operation?: string): Sent {
  const search = options.query ? `?${new URLSearchParams(options.query).toString()}` : '';
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  // A followed request has no deadline of its own: the liveness requests beside it decide (follow()).
  const timeoutMs = operation === undefined ? (options.timeoutMs ?? 15_000) : 0;
  let settle: (envelope: Envelope) => void = () => undefined;
  const answer = new Promise<Envelope>((resolve) => {
    let settled = false;
    settle = (envelope) => {
      if (!settled) resolve(envelope);
      settled = true;
    };
  });
  const req = request(
    {
      socketPath,
      method: options.method,
      path: `${options.path}${search}`,
      headers: {
        host: 'localhost',
        authorization: `Bearer ${token}`,
        ...(operation === undefined ? {} : { [OPERATION_HEADER]: operation }),
        ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
      },
      timeout: timeoutMs,
    },
    (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        try {
          settle(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Envelope);
        } catch {
          settle(
            failure('daemon_unreachable', `${socketPath} answered with something that is not the handoff API`, 'restart the daemon with `handoff daemon`'),
          );
        }
      });
    },
  );
  req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
  req.on('error', (error: NodeJS.ErrnoException) =>
    settle(
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
  return {
    answer,
    abandon(instead) {
      settle(instead);
      req.destroy();
    },
  };
}

/** How often a followed request is checked on, and how long that cheap check may take before the daemon counts as gone. */
const FOLLOW_EVERY_MS = 5_000;
const LIVENESS_TIMEOUT_MS = 10_000;

const viewOf = (envelope: Envelope, id: string): OperationView | undefined =>
  envelope.error ? undefined : (envelope.data as { operations?: OperationView[] } | null)?.operations?.find((op) => op.operation === id);

/**
 * A long request (accept, verify) followed for as long as the daemon works on it: every few seconds a
 * cheap `GET /v1/operations` says the daemon answers and what it does now. The CLI says
 * daemon_unreachable only when that check gets no answer (the request is then dropped, which cancels
 * it in the daemon unless its lease is already moving, and the message says which it was). Ctrl-C
 * cancels it the same way, and says plainly when it was too late and the request goes on.
 */
async function follow(stateDir: string, reached: { socketPath: string; token: string }, options: CallOptions, follow: Follow): Promise<Envelope> {
  const id = randomUUID();
  const sent = send(stateDir, reached, options, id);
  const check = (method: 'GET' | 'POST', path: string, body?: unknown) =>
    send(stateDir, reached, { method, path, ...(body === undefined ? {} : { body }), timeoutMs: LIVENESS_TIMEOUT_MS }).answer;
  let last: OperationView | undefined;
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  const tick = async () => {
    const answer = await check('GET', '/v1/operations');
    if (done) return;
    if (answer.code === 'daemon_unreachable') {
      const where = last === undefined ? '' : ` while it was ${last.phase}`;
      return sent.abandon(
        failure(
          'daemon_unreachable',
          `the daemon for ${stateDir} stopped answering${where}: ${answer.error?.message ?? ''}`,
          last?.committed === true
            ? 'the lease was already moving: whether it moved is unknown until the daemon answers again; `handoff status` says'
            : 'the request was dropped: the daemon cancels it at its next step unless the lease starts to move first, and `handoff status` says whether it did; check the daemon log in the state dir, or restart it with `handoff daemon`',
        ),
      );
    }
    last = viewOf(answer, id) ?? last;
    if (last !== undefined) follow.progress(`… still ${last.phase} (${Math.round(last.elapsed_ms / 1000)} s)`);
    timer = setTimeout(() => void tick(), FOLLOW_EVERY_MS);
  };
  timer = setTimeout(() => void tick(), FOLLOW_EVERY_MS);
  const unsure = failure(
    'interrupted',
    'interrupted; the daemon did not confirm the cancel',
    'the dropped request cancels it unless its lease was already moving: `handoff status` in this checkout says which',
  );
  let interrupting = false;
  const interrupt = async () => {
    // A second Ctrl-C does not wait for the daemon's answer to the first.
    if (interrupting) return sent.abandon(unsure);
    interrupting = true;
    const answer = await check('POST', '/v1/operations/cancel', { operation: id });
    const now = viewOf(answer, id);
    if (answer.error) return sent.abandon(unsure);
    // Gone from the table: its answer is on the way, and it is what happened.
    if (now === undefined) return;
    sent.abandon(
      now.committed
        ? failure(
            'interrupted',
            `interrupted while ${now.phase}: it was past the point where the lease moves, so the daemon finishes it`,
            'see the result with `handoff status` (and `handoff lease show`) in this checkout',
          )
        : failure('interrupted', `interrupted while ${now.phase}: cancelled before the lease moved`, 'nothing was changed; run it again'),
    );
  };
  const onSigint = () => void interrupt();
  process.on('SIGINT', onSigint);
  try {
    return await sent.answer;
  } finally {
    done = true;
    clearTimeout(timer);
    process.off('SIGINT', onSigint);
  }
}
