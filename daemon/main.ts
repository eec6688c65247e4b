import { join } from 'node:path';
import pino, { type DestinationStream } from 'pino';
import { HandoffError, PROTOCOL_VERSION, stateOf, workspaceMachine } from '../protocol/index.js';
import { eventMeta, systemClock, type Clock } from './clock.js';
import { loadConfig } from './config.js';
import { createDrain } from './evacuation/index.js';
import { buildServer } from './http/index.js';
import { createLogger, type Logger } from './logger.js';
import { PauseWatcher } from './pause-watch.js';
import { createService, type DaemonInfo } from './service.js';
import { acquireInstanceGuard, Journal, openStateDir, removeDaemonInfo, writeDaemonInfo } from './store/index.js';
import { WorkspaceRegistry } from './workspaces/registry.js';
import { ensureWorkspaceDir } from './workspaces/workspace-dir.js';

export const JOURNAL_FILE = 'journal.jsonl';
export const LOG_FILE = 'daemon.log';

export interface DaemonOptions {
  readonly stateDir: string;
  readonly port: number;
  readonly clock?: Clock;
  /** Where log lines go; the log file in the state dir by default. */
  readonly logDestination?: DestinationStream;
}

export interface RunningDaemon {
  readonly info: DaemonInfo;
  readonly logger: Logger;
  /** Resolves once the daemon has shut down, for whatever reason. */
  readonly closed: Promise<void>;
  stop(): Promise<void>;
}

const LOOPBACK = '127.0.0.1';

/**
 * The composition root: the only place that opens the state dir, listens, and wires effects into
 * the machine. Every step that can fail undoes the ones before it.
 */
export async function startDaemon(options: DaemonOptions): Promise<RunningDaemon> {
  const clock = options.clock ?? systemClock;
  const { dir, token } = await openStateDir(options.stateDir, { uid: process.getuid?.() ?? 0 });
  const guard = await acquireInstanceGuard(dir, process.pid);
  const undo: (() => Promise<unknown>)[] = [() => guard.release()];
  const unwind = async () => {
    for (const step of undo.reverse()) await step().catch(() => undefined);
  };
  try {
    const config = await loadConfig(dir);
    const logger = createLogger(options.logDestination ?? pino.destination({ dest: join(dir, LOG_FILE), mkdir: true, sync: false, mode: 0o600 }));
    const log = logger.child({ module: 'daemon' });
    const { journal, records } = await Journal.open(join(dir, JOURNAL_FILE), {
      onTornTail: (torn) => log.warn({ torn }, 'the journal had a torn last record from a crash; it was cut off'),
    });
    undo.push(() => journal.close());

    let registry: WorkspaceRegistry | null = null;
    const liveRegistry = () => {
      if (registry === null) throw new Error('the registry is used before it exists');
      return registry;
    };
    const drain = createDrain(liveRegistry, log.child({ module: 'drain' }));
    const pauses = new PauseWatcher(dir, { setPause: (...args) => liveRegistry().setPause(...args) }, clock, log.child({ module: 'pause' }));
    registry = new WorkspaceRegistry({
      machine: workspaceMachine.provide({ actions: { startDrain: ({ context }) => drain.start(context.root) } }),
      config,
      append: (record) => journal.append(record),
      meta: () => eventMeta(clock),
      log,
      onOpen: async (root) => {
        await ensureWorkspaceDir(root);
        await pauses.watchWorkspace(root);
      },
    });
    registry.restore(records);
    undo.push(async () => liveRegistry().stop());
    await pauses.start();
    undo.push(() => pauses.close());
    await registry.reconcile();
    for (const workspace of registry.all()) {
      const snapshot = workspace.snapshot();
      // A crash between entering EVACUATE and the drain's first report: start it again.
      if (stateOf(snapshot) === 'EVACUATE' && snapshot.context.blocked === null) drain.start(workspace.root);
    }

    let port = options.port;
    const startedAt = new Date(clock.now()).toISOString();
    const info = (): DaemonInfo => ({ pid: process.pid, port, protocol_version: PROTOCOL_VERSION, started_at: startedAt, state_dir: dir });
    let stopping: Promise<void> | null = null;
    let resolveClosed: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
    const stop = (): Promise<void> => {
      stopping ??= (async () => {
        log.info('stopping');
        await unwind();
        logger.flush();
        resolveClosed();
      })();
      return stopping;
    };
    const service = createService({ registry, clock, stateDir: dir, info, requestStop: () => void stop() });
    const server = buildServer({ service, token, port: () => port, logger, bodyLimit: config.body_limit_bytes });
    undo.push(() => server.close());

    await server.listen({ host: LOOPBACK, port: options.port });
    const address = server.server.address();
    if (address === null || typeof address === 'string' || address.address !== LOOPBACK) {
      throw new HandoffError('internal_error', `the API bound to ${JSON.stringify(address)} instead of ${LOOPBACK}`, 'report this; the daemon refuses to serve off loopback');
    }
    port = address.port;
    await writeDaemonInfo(dir, { pid: process.pid, port, protocol_version: PROTOCOL_VERSION, started_at: startedAt });
    undo.push(() => removeDaemonInfo(dir, process.pid));
    log.info({ port, stateDir: dir, workspaces: registry.all().length }, 'listening');
    return { info: info(), logger, closed, stop };
  } catch (error) {
    await unwind();
    throw error;
  }
}

/** `handoff daemon`: run in the foreground until SIGINT, SIGTERM or `handoff daemon stop`. */
export async function runForeground(options: DaemonOptions, announce: (daemon: RunningDaemon) => void): Promise<void> {
  const daemon = await startDaemon(options);
  const onSignal = (signal: NodeJS.Signals) => {
    daemon.logger.info({ signal }, 'signal received');
    void daemon.stop();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  announce(daemon);
  await daemon.closed;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
}
