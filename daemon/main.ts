import { join } from 'node:path';
import pino, { type DestinationStream } from 'pino';
import { DRAIN_STEPS, HandoffError, PROTOCOL_VERSION, stateOf, type DrainStep } from '../protocol/index.js';
import { eventMeta, systemClock, type Clock } from './clock.js';
import { loadConfig } from './config.js';
import { createDrainRunner } from './evacuation/index.js';
import { resolveRepoRoot } from './git/index.js';
import { buildServer } from './http/index.js';
import { createDashboard } from './http/dashboard/index.js';
import { listenLocalSocket } from './http/local-socket.js';
import type { TailStatus } from '../adapters/telemetry/codex-tail.js';
import { cachedRootResolver, createIngestService, startCodexWatch } from './ingest/index.js';
import { createLogger, type Logger } from './logger.js';
import { createAgentContextService, SessionRecords } from './agent-context/index.js';
import { readCapsule } from './capsule/capsule-file.js';
import { WorkspaceFilesWatcher } from './workspace-files-watch.js';
import { createService, type DaemonInfo } from './service.js';
import { createLeaseSync, createTakeoverService } from './takeover/index.js';
import {
  acquireInstanceGuard,
  Journal,
  JOURNAL_FILE,
  openStateDir,
  removeDaemonInfo,
  rotateToken,
  SOCKET_FILE,
  TOKEN_FILE,
  writeDaemonInfo,
} from './store/index.js';
import { WorkspaceRegistry } from './workspaces/registry.js';
import { ensureWorkspaceDir } from './workspaces/workspace-dir.js';
import { createWorkspaceJournal } from './workspaces/workspace-journal.js';

export const LOG_FILE = 'daemon.log';

export interface DaemonOptions {
  readonly stateDir: string;
  readonly port: number;
  readonly clock?: Clock;
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

const LOOPBACK = '127.0.0.1';

/**
 * The composition root: the only place that opens the state dir, listens, and wires effects into
 * the machine. Every step that can fail undoes the ones before it.
 */
export async function startDaemon(options: DaemonOptions): Promise<RunningDaemon> {
  const clock = options.clock ?? systemClock;
  const uid = process.getuid?.() ?? 0;
  const { dir } = await openStateDir(options.stateDir, { uid });
  const guard = await acquireInstanceGuard(dir, process.pid);
  const undo: (() => Promise<unknown>)[] = [() => guard.release()];
  const unwind = async () => {
    for (const step of undo.reverse()) await step().catch(() => undefined);
  };
  try {
    // Only the lock holder rotates: a second starter that is about to be refused must not change it.
    const token = await rotateToken(join(dir, TOKEN_FILE), uid);
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
    const drain = createDrainRunner({
      registry: liveRegistry,
      stateDir: dir,
      config,
      clock,
      log: log.child({ module: 'drain' }),
      killAfter: options.killAfterStep ?? null,
    });
    const files = new WorkspaceFilesWatcher(
      dir,
      {
        setPause: (...args) => liveRegistry().setPause(...args),
        capsuleChanged: async (root) => {
          const { sha256, error } = await readCapsule(root);
          await liveRegistry().dispatch(root, { type: 'CAPSULE_SET', capsule: { sha256, updated_at: new Date(clock.now()).toISOString(), error } });
        },
      },
      clock,
      log.child({ module: 'files' }),
    );
    const workspaceJournal = createWorkspaceJournal(journal, {
      compactAfterBytes: config.journal.compact_after_bytes,
      snapshot: () => liveRegistry().snapshotRecords(),
      log: log.child({ module: 'journal' }),
    });
    registry = new WorkspaceRegistry({
      config,
      append: (record) => workspaceJournal.append(record),
      // After the transition has settled, so the drain reads the snapshot that entered EVACUATE.
      effect: (_effect, root) => void setImmediate(() => drain.start(root)),
      meta: () => eventMeta(clock),
      log,
      onOpen: async (root) => {
        await ensureWorkspaceDir(root);
        await files.watchWorkspace(root);
      },
    });
    registry.restore(records);
    // A journal grown before compaction existed (or past its bound while the daemon was down) starts small again.
    await workspaceJournal.compactIfLarge();
    // Registered before the journal closes, so it runs first on the way down.
    undo.push(() => liveRegistry().flushReadings());
    const readingsTimer = setInterval(
      () =>
        void liveRegistry()
          .flushReadings()
          .catch((error: unknown) => log.error({ err: error }, 'could not write readings')),
      config.journal.readings_flush_seconds * 1000,
    );
    readingsTimer.unref();
    undo.push(async () => clearInterval(readingsTimer));
    await files.start();
    undo.push(() => files.close());
    await registry.reconcile();
    for (const workspace of registry.all()) {
      const snapshot = workspace.snapshot();
      // A drain interrupted by a crash resumes by itself (a paused one records where it stopped).
      const draining = stateOf(snapshot) === 'EVACUATE' || (stateOf(snapshot) === 'TAKEOVER' && snapshot.context.cycle?.return_drain != null);
      if (draining && snapshot.context.blocked === null) drain.start(workspace.root);
    }
    undo.push(() => drain.idle());

    let port = options.port;
    const startedAt = new Date(clock.now()).toISOString();
    // Set once the Codex tail is started below; `handoff status` says whether it is on or waiting.
    let codexTail: (() => TailStatus) | null = null;
    const info = (): DaemonInfo => ({
      pid: process.pid,
      port,
      protocol_version: PROTOCOL_VERSION,
      started_at: startedAt,
      state_dir: dir,
      codex_tail: codexTail?.() ?? null,
    });
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
    const rootOf = cachedRootResolver(resolveRepoRoot);
    const takeover = createTakeoverService({ registry, config, clock, rootOf, startDrain: (home) => drain.start(home) });
    const leaseSync = createLeaseSync({
      registry,
      clock,
      log: log.child({ module: 'lease-sync' }),
      timeoutMs: Math.min(10_000, config.git_timeout_seconds * 1000),
    });
    // Without polling nothing would tell an idle source that another machine took its lease.
    const syncTimer = setInterval(() => void leaseSync.syncAll(), config.lease_sync_seconds * 1000);
    syncTimer.unref();
    undo.push(async () => clearInterval(syncTimer));
    const service = createService({
      registry,
      drain,
      takeover,
      leaseSync,
      guardWhenUnverified: config.guard_when_lease_unverified,
      clock,
      stateDir: dir,
      info,
      requestStop: () => void stop(),
      resolveRoot: rootOf,
    });
    const ingest = createIngestService({ registry, clock, resolveRoot: rootOf, log: log.child({ module: 'ingest' }) });
    const codex = await startCodexWatch({ stateDir: dir, env: process.env, ingest, clock, log: log.child({ module: 'codex' }) });
    codexTail = () => codex.status();
    undo.push(() => codex.close());
    const dashboard = createDashboard({ registry, takeover, clock, info, port: () => port, log, records });
    const sessionRecords = await SessionRecords.open(dir, log.child({ module: 'agent-context' }));
    const agentContext = createAgentContextService({
      registry,
      takeover,
      records: sessionRecords,
      clock,
      resolveRoot: rootOf,
      remindAfter: config.context_reminder_after_tool_calls,
      log: log.child({ module: 'agent-context' }),
    });
    undo.push(() => agentContext.flush());
    const server = buildServer({ service, takeover, ingest, token, port: () => port, logger, bodyLimit: config.body_limit_bytes, dashboard, agentContext });
    undo.push(() => server.close());

    await server.listen({ host: LOOPBACK, port: options.port });
    const address = server.server.address();
    if (address === null || typeof address === 'string' || address.address !== LOOPBACK) {
      throw new HandoffError(
        'internal_error',
        `the API bound to ${JSON.stringify(address)} instead of ${LOOPBACK}`,
        'report this; the daemon refuses to serve off loopback',
      );
    }
    port = address.port;
    await listenLocalSocket(server.localSocket, join(dir, SOCKET_FILE));
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
  const daemon = await startDaemon({ ...options, killAfterStep: options.killAfterStep ?? killAfterStepFromEnv(process.env['HANDOFF_TEST_KILL_AFTER_STEP']) });
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
