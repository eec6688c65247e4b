import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import pino, { type DestinationStream } from 'pino';
import { DRAIN_STEPS, HandoffError, type DrainStep } from '../protocol/index.js';
import { systemClock, type Clock, type Monotonic } from './clock.js';
import { claimStateDir, composeDaemon, type ComposedDaemon } from './compose-daemon.js';
import { loadConfig } from './config.js';
import { resolveGit } from './git/index.js';
import { createLogger, type Logger } from './logger.js';
import type { DaemonInfo } from './service.js';

export const LOG_FILE = 'daemon.log';

export interface DaemonOptions {
  readonly stateDir: string;
  readonly port: number;
  readonly clock?: Clock;
  readonly monotonic?: Monotonic;
  /** Where log lines go; the log file in the state dir by default. */
  readonly logDestination?: DestinationStream;
  /** Test-only fault point (HANDOFF_TEST_KILL_AFTER_STEP): SIGKILL right after this drain step's effect. */
  readonly killAfterStep?: DrainStep | null;
}

/** Reads the test-only fault point; anything that is not a step name is refused, not ignored. */
export function killAfterStepFromEnv(value: string | undefined): DrainStep | null {
  if (value === undefined || value === '') return null;
  if (!(DRAIN_STEPS as readonly string[]).includes(value)) {
    throw new HandoffError('usage_error', `HANDOFF_TEST_KILL_AFTER_STEP='${value}' is not a drain step`, `use one of ${DRAIN_STEPS.join(', ')}, or unset it`);
  }
  return value as DrainStep;
}

export interface RunningDaemon {
  readonly info: DaemonInfo;
  readonly logger: Logger;
  /** Resolves once the daemon has shut down, for whatever reason. */
  readonly closed: Promise<void>;
  stop(): Promise<void>;
}

/**
 * The process around the composition (daemon/compose-daemon.ts): claims the state dir, composes the
 * daemon, listens, and is the one place that decides when it stops. Every step that can fail undoes
 * the ones before it.
 */
export async function startDaemon(options: DaemonOptions): Promise<RunningDaemon> {
  const claimed = await claimStateDir(options.stateDir);
  const { dir } = claimed;
  let daemon: ComposedDaemon | null = null;
  let startLog: Logger | null = null;
  try {
    const config = await loadConfig(dir);
    const logger = createLogger(options.logDestination ?? pino.destination({ dest: join(dir, LOG_FILE), mkdir: true, sync: false, mode: 0o600 }));
    startLog = logger;
    // Searched once, here: every git call then starts this path, and a missing git is said at the start.
    const gitBinary = await resolveGit(process.env['PATH']);
    if (gitBinary === null)
      logger.error({ path: process.env['PATH'] }, "git is not on the daemon's PATH: no checkpoint can be made; install git, then run `handoff resume`");
    else logger.info({ git: gitBinary }, 'git found');
    let stopping: Promise<void> | null = null;
    let resolveClosed: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
    const stop = (): Promise<void> => {
      stopping ??= (async () => {
        logger.child({ module: 'daemon' }).info('stopping');
        await daemon?.close();
        await claimed.release().catch((error: unknown) => logger.error({ err: error }, 'could not release the instance lock'));
        logger.flush();
        resolveClosed();
      })();
      return stopping;
    };
    daemon = await composeDaemon({
      stateDir: dir,
      token: claimed.token,
      config,
      port: options.port,
      logger,
      clock: options.clock ?? systemClock,
      monotonic: options.monotonic,
      env: process.env,
      requestStop: () => void stop(),
      killAfterStep: options.killAfterStep ?? null,
    });
    await daemon.listen(options.port);
    collectStartGarbage();
    return { info: daemon.info(), logger, closed, stop };
  } catch (error) {
    await daemon?.close();
    // The start's own error is the one to report; a lock left behind is taken over by the next start.
    await claimed.release().catch((releaseError: unknown) => startLog?.error({ err: releaseError }, 'could not release the instance lock'));
    throw error;
  }
}

/**
 * One full collection once the daemon is up. Loading its modules, replaying the journal and taking in
 * the Codex offsets leave megabytes of garbage in the old generation, which V8 keeps, and the resident
 * set with it, until its next major collection: at an idle daemon none came within 15 s (10,000 rollouts
 * on record: 86.6 → 76 MB RSS with this; docs/performance/daemon.md). Node offers gc() only behind
 * --expose-gc; set at run time it reaches a new context only, so the daemon's own code never sees it.
 */
function collectStartGarbage(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  setFlagsFromString('--no-expose-gc');
  gc();
}

/** `handoff daemon`: run in the foreground until SIGINT, SIGTERM or `handoff daemon stop`. */
export async function runForeground(options: DaemonOptions, announce: (daemon: RunningDaemon) => void): Promise<void> {
  // Listening before the start ends: daemon.json is published inside it, and a SIGTERM sent by whoever read
  // it must stop the daemon gracefully (removing daemon.json), not take Node's default and leave it behind.
  let daemon: RunningDaemon | null = null;
  let signalled: NodeJS.Signals | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    signalled = signal;
    if (daemon === null) return;
    daemon.logger.info({ signal }, 'signal received');
    void daemon.stop();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    daemon = await startDaemon({ ...options, killAfterStep: options.killAfterStep ?? killAfterStepFromEnv(process.env['HANDOFF_TEST_KILL_AFTER_STEP']) });
    if (signalled !== null) onSignal(signalled);
    announce(daemon);
    await daemon.closed;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
