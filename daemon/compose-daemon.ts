import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { HandoffError, PROTOCOL_VERSION, runningDrain, stateOf, type DrainStep } from '../protocol/index.js';
import type { Config } from '../schemas/index.js';
import { createConfigReload } from './config-reload.js';
import { createAgentContextService, SessionActivity, SessionRecords } from './agent-context/index.js';
import { readCapsule } from './capsule/capsule-file.js';
import { eventMeta, randomEntropy, systemIntervals, systemMonotonic, type Clock, type Intervals, type Monotonic } from './clock.js';
import { createDrainRunner, createStepStore, type DrainRunner } from './evacuation/index.js';
import { resolveRepoRoot } from './git/index.js';
import { createDashboard } from './http/dashboard/index.js';
import { buildServer } from './http/index.js';
import { listenLocalSocket } from './http/local-socket.js';
import { cachedRootResolver, createIngestService, startCodexWatch, startEventSpool, startGeminiWatch } from './ingest/index.js';
import type { Logger } from './logger.js';
import { createService, type DaemonInfo } from './service.js';
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
import { createCycleLedger, createPruneService } from './prune/index.js';
import { createRehearsals, type Rehearsals } from './rehearsal/index.js';
import { cloneOffers, createLeaseSync, createTakeoverService } from './takeover/index.js';
import { createLeaseHomes } from './lease/lease-home.js';
import { WorkspaceFilesWatcher } from './workspace-files-watch.js';
import { WorkspaceRegistry } from './workspaces/registry.js';
import { ensureWorkspaceDir } from './workspaces/workspace-dir.js';
import { createWorkspaceJournal } from './workspaces/workspace-journal.js';

const LOOPBACK = '127.0.0.1';
/** How long a clone's remote may take to list its offered leases for a SessionStart pickup (one listing, one fetch). */
const CLONE_OFFERS_TIMEOUT_MS = 1500;

export type DrainRunnerDeps = Parameters<typeof createDrainRunner>[0];

/** A state dir this process holds: opened private, locked against a second daemon, with a fresh token. */
export interface ClaimedStateDir {
  readonly dir: string;
  readonly token: string;
  release(): Promise<void>;
}

/**
 * Opens the state dir and takes its instance lock. Only the lock holder rotates the token: a second
 * starter that is about to be refused must not change it.
 */
export async function claimStateDir(path: string, pid: number = process.pid): Promise<ClaimedStateDir> {
  const uid = process.getuid?.() ?? 0;
  const { dir } = await openStateDir(path, { uid });
  const guard = await acquireInstanceGuard(dir, pid);
  try {
    const token = await rotateToken(join(dir, TOKEN_FILE), uid);
    return { dir, token, release: () => guard.release() };
  } catch (error) {
    await guard.release();
    throw error;
  }
}

export interface ComposeDaemonOptions {
  /** The claimed state dir (claimStateDir): the composition never takes the lock itself. */
  readonly stateDir: string;
  readonly token: string;
  /** Read, defaulted, validated and frozen (daemon/config.ts). */
  readonly config: Config;
  /** The port the API answers to (the Host check); `listen()` binds it, 0 picking a free one. */
  readonly port: number;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Waits and deadlines (the drain's wait above all); the system's monotonic clock by default. */
  readonly monotonic?: Monotonic;
  /** On the same time as `clock`: whoever drives the clock drives the repeating work too. */
  readonly intervals?: Intervals;
  /** The random half of cycle ids. */
  readonly entropy?: () => string;
  /** Where the Codex tail reads CODEX_HOME from. */
  readonly env: NodeJS.ProcessEnv;
  /** Asked for when `POST /v1/daemon/stop` arrives; the caller closes the daemon. */
  readonly requestStop: () => void;
  /** The drain's runner over its step effects; daemon/evacuation/'s by default. */
  readonly drainRunner?: (deps: DrainRunnerDeps) => DrainRunner;
  /** The fault point of HANDOFF_TEST_KILL_AFTER_STEP, handed to the drain runner. */
  readonly killAfterStep?: DrainStep | null;
  /** The repository root of a directory (git); a cache shared across compositions spares git calls. */
  readonly rootOf?: (dir: string) => Promise<string>;
  /** Makes a workspace's `.session-handoff/`; the watcher of its files is added after it. */
  readonly prepareWorkspace?: (root: string) => Promise<void>;
}

export interface ComposedDaemon {
  /** Built and ready, not listening: `app.inject()` reaches every route. */
  readonly app: FastifyInstance;
  readonly registry: WorkspaceRegistry;
  readonly journalPath: string;
  readonly stateDir: string;
  readonly token: string;
  info(): DaemonInfo;
  /**
   * Binds the API on loopback TCP (`port`, 0 picks one) and on the socket in the state dir, then
   * publishes daemon.json. Answers the bound port.
   */
  listen(port: number): Promise<number>;
  /** In reverse order of start: daemon.json, listeners, agent context, Codex tail, lease sync, drain, watchers, a last readings write, journal. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * The composition root: config, journal, registry, the effects wired into the machine, the repeating
 * work and the HTTP app, built without listening. `daemon/main.ts` and every suite that composes a
 * daemon call this, so they run the same wiring. Every step that can fail undoes the ones before it.
 */
export async function composeDaemon(options: ComposeDaemonOptions): Promise<ComposedDaemon> {
  const { clock, config, logger, stateDir: dir, token } = options;
  const intervals = options.intervals ?? systemIntervals;
  const entropy = options.entropy ?? randomEntropy;
  const prepareWorkspace = options.prepareWorkspace ?? ensureWorkspaceDir;
  const log = logger.child({ module: 'daemon' });
  const undo: (() => Promise<unknown>)[] = [];
  let unwinding: Promise<void> | null = null;
  const unwind = (): Promise<void> => {
    unwinding ??= (async () => {
      for (const step of undo.reverse()) await step().catch((error: unknown) => log.error({ err: error }, 'a shutdown step failed'));
    })();
    return unwinding;
  };
  const repeat = (ms: number, what: string, task: () => Promise<void>) => {
    const cancel = intervals.every(ms, () => task().catch((error: unknown) => log.error({ err: error }, `could not ${what}`)));
    undo.push(async () => cancel());
  };
  try {
    const journalPath = join(dir, JOURNAL_FILE);
    const { journal, records } = await Journal.open(journalPath, {
      onTornTail: (torn) => log.warn({ torn }, 'the journal had a torn last record from a crash; it was cut off'),
    });
    undo.push(() => journal.close());

    let registry: WorkspaceRegistry | null = null;
    const liveRegistry = () => {
      if (registry === null) throw new Error('the registry is used before it exists');
      return registry;
    };
    // Made once the registry exists; the machine's effects run only after that.
    let rehearsals: Rehearsals | null = null;
    const activity = new SessionActivity();
    const monotonic = options.monotonic ?? systemMonotonic;
    const drain = (options.drainRunner ?? createDrainRunner)({
      registry: liveRegistry,
      lastHookMs: (root) => activity.lastHookMs(root),
      stateDir: dir,
      config,
      clock,
      monotonic,
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
      effect: (effect, root) => void setImmediate(() => (effect === 'startDrain' ? drain.start(root) : rehearsals?.start(root))),
      meta: () => eventMeta(clock, entropy),
      log,
      onOpen: async (root) => {
        await prepareWorkspace(root);
        await files.watchWorkspace(root);
      },
    });
    const rehearsing = createRehearsals({
      registry,
      config,
      clock,
      monotonic,
      entropy,
      stateDir: dir,
      log: log.child({ module: 'rehearsal' }),
      draining: (root) => drain.isRunning(root),
      env: options.env,
    });
    rehearsals = rehearsing;
    registry.restore(records);
    // A journal grown before compaction existed (or past its bound while the daemon was down) starts small again.
    await workspaceJournal.compactIfLarge();
    // Registered before the journal closes, so it runs first on the way down.
    undo.push(() => liveRegistry().flushReadings());
    repeat(config.journal.readings_flush_seconds * 1000, 'write readings', () => liveRegistry().flushReadings());
    await files.start();
    undo.push(() => files.close());
    await registry.reconcile();
    for (const workspace of registry.all()) {
      const snapshot = workspace.snapshot();
      // A drain interrupted by a crash resumes by itself (a paused one records where it stopped).
      if (runningDrain(stateOf(snapshot), snapshot.context.cycle) !== null && snapshot.context.blocked === null) drain.start(workspace.root);
    }
    undo.push(() => drain.idle());
    // A workspace restored in PREPARE (or one whose tree moved) is rehearsed by this check.
    repeat(Math.min(60, config.rehearsal.interval_seconds) * 1000, 'rehearse the evacuation', () => rehearsing.tick());
    undo.push(() => rehearsing.idle());

    let port = options.port;
    const startedAt = new Date(clock.now()).toISOString();
    // Set once the Codex tail is started below; `handoff status` says whether it is on or waiting.
    let codexTail: (() => DaemonInfo['codex_tail']) | null = null;
    const info = (): DaemonInfo => ({
      pid: process.pid,
      port,
      protocol_version: PROTOCOL_VERSION,
      started_at: startedAt,
      state_dir: dir,
      codex_tail: codexTail?.() ?? null,
    });
    const rootOf = options.rootOf ?? cachedRootResolver(resolveRepoRoot);
    const leaseSync = createLeaseSync({
      registry,
      clock,
      log: log.child({ module: 'lease-sync' }),
      timeoutMs: Math.min(10_000, config.git_timeout_seconds * 1000),
    });
    // Without polling nothing would tell an idle source that another machine took its lease.
    repeat(config.lease_sync_seconds * 1000, 'sync leases', () => leaseSync.syncAll());
    const homes = createLeaseHomes({
      registry,
      leaseSync,
      clock,
      guardWhenUnverified: config.guard_when_lease_unverified,
      rootOf,
      startDrain: (home) => drain.start(home),
      acceptTimeoutMs: config.git_timeout_seconds * 1000,
    });
    const takeover = createTakeoverService({ registry, config, clock, rootOf, homes });
    const service = createService({
      registry,
      drain,
      takeover,
      leaseSync,
      homes,
      rehearsals: rehearsing,
      guardWhenUnverified: config.guard_when_lease_unverified,
      clock,
      stateDir: dir,
      info,
      requestStop: options.requestStop,
      resolveRoot: rootOf,
      applyPauseFile: (path) => files.applyPauseFile(path),
      reloadConfig: createConfigReload({ stateDir: dir, started: config, registry, log }).reload,
    });
    const ingest = createIngestService({ registry, clock, resolveRoot: rootOf, log: log.child({ module: 'ingest' }) });
    const codex = await startCodexWatch({ stateDir: dir, env: options.env, ingest, clock, log: log.child({ module: 'codex' }) });
    codexTail = () => codex.status();
    undo.push(() => codex.close());
    const gemini = await startGeminiWatch({ stateDir: dir, outfiles: config.gemini.telemetry_outfiles, ingest, log: log.child({ module: 'gemini' }) });
    undo.push(() => gemini.close());
    const qwen = await startGeminiWatch({ stateDir: dir, agent: 'qwen', outfiles: config.qwen.telemetry_outfiles, ingest, log: log.child({ module: 'qwen' }) });
    undo.push(() => qwen.close());
    const spool = await startEventSpool({
      stateDir: dir,
      ingest,
      clock,
      maxAgeMs: config.pressure.freshness_seconds * 1000,
      log: log.child({ module: 'spool' }),
    });
    undo.push(() => spool.close());
    const dashboard = createDashboard({ registry, takeover, clock, monotonic, info, port: () => port, log, records });
    const sessionRecords = await SessionRecords.open(dir, log.child({ module: 'agent-context' }));
    const agentContext = createAgentContextService({
      registry,
      takeover,
      records: sessionRecords,
      activity,
      clock,
      resolveRoot: rootOf,
      remindAfter: config.context_reminder_after_tool_calls,
      // Within the SessionStart hook's wait for the daemon (2 s): past it the session starts without the pickup.
      cloneOffers: (root) => cloneOffers(root, CLONE_OFFERS_TIMEOUT_MS),
      log: log.child({ module: 'agent-context' }),
    });
    undo.push(() => agentContext.flush());
    const ledger = createCycleLedger(createStepStore(dir));
    const unwatch = ledger.watch(registry, log.child({ module: 'prune' }));
    undo.push(async () => unwatch());
    const prune = createPruneService({ registry, takeover, ledger, resolveRoot: rootOf, remoteTimeoutMs: config.git_timeout_seconds * 1000 });
    const app = buildServer({ service, takeover, prune, ingest, token, port: () => port, logger, bodyLimit: config.body_limit_bytes, dashboard, agentContext });
    undo.push(() => app.close());
    await app.ready();

    const live = registry;
    return {
      app,
      registry: live,
      journalPath,
      stateDir: dir,
      token,
      info,
      async listen(wanted) {
        await app.listen({ host: LOOPBACK, port: wanted });
        const address = app.server.address();
        if (address === null || typeof address === 'string' || address.address !== LOOPBACK) {
          throw new HandoffError(
            'internal_error',
            `the API bound to ${JSON.stringify(address)} instead of ${LOOPBACK}`,
            'report this; the daemon refuses to serve off loopback',
          );
        }
        port = address.port;
        await listenLocalSocket(app.localSocket, join(dir, SOCKET_FILE));
        await writeDaemonInfo(dir, { pid: process.pid, port, protocol_version: PROTOCOL_VERSION, started_at: startedAt });
        undo.push(() => removeDaemonInfo(dir, process.pid));
        log.info({ port, stateDir: dir, workspaces: live.all().length }, 'listening');
        return port;
      },
      close: unwind,
    };
  } catch (error) {
    await unwind();
    throw error;
  }
}
