import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  checkCode,
  CODES,
  editPolicy,
  failure,
  HandoffError,
  outcomeEnvelope,
  stageMove,
  stateOf,
  statusView,
  success,
  type Envelope,
  type OfferCarry,
  type PauseInfo,
  type StageStarted,
} from '../protocol/index.js';
import type {
  LeaseAcquireBody,
  LeaseBreakBody,
  LeaseTokenBody,
  ReturnBody,
  CloseBody,
  PauseBody,
  SignalBody,
  NowBody,
  StageBody,
  WarningBody,
  CapsuleBody,
} from '../schemas/index.js';
import { capsuleFromMarkdown, parseCapsule, readCapsule, writeCapsule } from './capsule/capsule-file.js';
import { capsuleQuality } from './capsule/quality.js';
import { writeAbandoned, type AbandonedRecord } from './evacuation/abandoned-record.js';
import type { TailStatus } from './ingest/index.js';
import type { Clock } from './clock.js';
import type { DrainRunner } from './evacuation/index.js';
import type { LeaseSync, TakeoverService } from './takeover/index.js';
import type { LeaseHomes } from './lease/lease-home.js';
import type { Rehearsals } from './rehearsal/index.js';
import { writeFileAtomic } from './store/index.js';
import type { WorkspaceRegistry } from './workspaces/registry.js';
import type { Workspace } from './workspaces/workspace.js';
import { PAUSE_FILE, workspacePauseFile } from './workspaces/workspace-dir.js';

export interface DaemonInfo {
  readonly pid: number;
  readonly port: number;
  readonly protocol_version: number;
  readonly started_at: string;
  readonly state_dir: string;
  /** The Codex rollout tail: on, waiting for CODEX_HOME to appear, or off (null before it started). */
  readonly codex_tail?: TailStatus | null;
}

export interface ServiceDeps {
  readonly registry: WorkspaceRegistry;
  readonly drain: DrainRunner;
  readonly takeover: TakeoverService;
  readonly leaseSync: LeaseSync;
  readonly homes: LeaseHomes;
  /** PREPARE's rehearsal of the evacuation; `handoff doctor` asks for one now. */
  readonly rehearsals: Pick<Rehearsals, 'now'>;
  readonly guardWhenUnverified: 'refuse' | 'last_known';
  readonly clock: Clock;
  readonly stateDir: string;
  readonly info: () => DaemonInfo;
  readonly requestStop: () => void;
  readonly resolveRoot: (dir: string) => Promise<string>;
  /** Reads a PAUSE file and applies it in the one order of every pause change (workspace-files-watch.ts); gives what it applied. */
  readonly applyPauseFile: (path: string) => Promise<PauseInfo | null>;
  /** Reads config.json again and applies what a running daemon can take (daemon/config-reload.ts). */
  readonly reloadConfig: () => Promise<Envelope>;
}

/**
 * What the HTTP handlers call: find the workspace, turn a request into an event stamped with time
 * and entropy, and map the machine's outcome to an Envelope. No rule lives here; they are in protocol/.
 */
/** A status long poll waits this long by default, and never longer than the max (under the CLI's request timeout). */
const LONG_POLL_MS = 20_000;
const MAX_LONG_POLL_MS = 25_000;

export function createService(deps: ServiceDeps) {
  const { registry, clock } = deps;
  const rootOf = deps.resolveRoot;

  /** Where a checkout's drain lives: its own workspace, or the cycle it took over (the return leg). */
  async function drainHome(repo: string): Promise<string> {
    const root = await rootOf(repo);
    return deps.takeover.receiving(root)?.home ?? root;
  }

  const iso = () => new Date(clock.now()).toISOString();

  async function send(repo: string, body: Parameters<WorkspaceRegistry['dispatch']>[1]): Promise<Envelope> {
    const { outcome, snapshot } = await registry.dispatch(await rootOf(repo), body);
    return outcomeEnvelope(outcome, snapshot);
  }

  /**
   * A source's offer on a remote carries its pause (another machine's accept is refused by it): written
   * now rather than at the next lease sync, so the answer can say whether it is already out there.
   */
  async function carryToOffers(workspaces: readonly Workspace[]): Promise<OfferCarry[]> {
    const offers = workspaces.flatMap((workspace) => {
      const snapshot = workspace.snapshot();
      const { cycle } = snapshot.context;
      return stateOf(snapshot) === 'HANDOFF_READY' && cycle?.remote ? [{ workspace, cycle: cycle.id, remote: cycle.remote.name }] : [];
    });
    return Promise.all(
      offers.map(async ({ workspace, cycle, remote }) => {
        const answered = await deps.leaseSync.syncWithin(workspace, deps.leaseSync.timeoutMs);
        const error = answered ? (deps.leaseSync.statusOf(workspace.root)?.error ?? null) : `${remote} did not answer within ${deps.leaseSync.timeoutMs} ms`;
        // Unpaused, the sync may follow an accept made elsewhere meanwhile: that is a stage started, not an open offer.
        return stateOf(workspace.snapshot()) === 'HANDOFF_READY' ? [{ cycle, remote, carried: error === null, error }] : [];
      }),
    ).then((carried) => carried.flat());
  }

  async function pauseFile(body: PauseBody): Promise<{ path: string; root: string | null }> {
    if (body.scope === 'global') return { path: join(deps.stateDir, PAUSE_FILE), root: null };
    if (body.repo === undefined) {
      throw new HandoffError('usage_error', 'a workspace pause needs the repository', 'pass --repo DIR, or --global to pause every workspace');
    }
    const root = await rootOf(body.repo);
    await registry.open(root);
    return { path: workspacePauseFile(root), root };
  }

  return {
    /** With `poll`, answers once the workspace moved past the change the caller saw (a long poll). */
    async status(repo: string, poll: { afterChange: number; waitMs: number | null } | null = null, leaseWaitMs: number | null = null): Promise<Envelope> {
      // A receiver's checkout answers with the cycle it took over (TAKEOVER, its holder, its ways on),
      // so the agent working there, and the edit guard, see what it holds rather than its own idle workspace.
      const checkout = await rootOf(repo);
      const taken = deps.takeover.receiving(checkout);
      const workspace = await registry.open(taken?.home ?? checkout);
      if (poll !== null) await workspace.changedSince(poll.afterChange, Math.min(poll.waitMs ?? LONG_POLL_MS, MAX_LONG_POLL_MS));
      // A lease that travels through the remote is read there first: another machine may have moved it.
      // Within `leaseWaitMs` only, if given (the edit guard): past it the last known lease answers, unverified.
      // A long poll that sees this machine's offer made takes the publish step's read-back of it, if fresh.
      const verified = await deps.leaseSync.syncWithin(workspace, leaseWaitMs, poll !== null);
      const current = deps.takeover.receiving(checkout);
      const receiving = current === null ? null : { ...current, checkout };
      const leaseSync = deps.leaseSync.statusOf(workspace.root);
      const unverifiedSince = verified ? (leaseSync?.unverified_since ?? null) : (leaseSync?.unverified_since ?? iso());
      // Read together: a change applied during the awaits below must not be reported as seen.
      const snapshot = workspace.snapshot();
      const change = workspace.change;
      const quality = await capsuleQuality(workspace.root, (await readCapsule(workspace.root)).capsule, snapshot.context);
      const edits = editPolicy(stateOf(snapshot), unverifiedSince, deps.guardWhenUnverified);
      return success('status', {
        ...statusView(snapshot, clock.now()),
        change,
        edit_policy: edits,
        capsule_quality: quality,
        receiving,
        lease_sync: leaseSync,
        step_progress: deps.drain.progress(workspace.root),
        daemon: deps.info(),
      });
    },

    /** `handoff doctor`: the way out proven (or not) now, in any state before an evacuation began. */
    async rehearse(repo: string): Promise<Envelope> {
      const workspace = await registry.open(await rootOf(repo));
      const wayOut = await deps.rehearsals.now(workspace.root);
      const snapshot = workspace.snapshot();
      return success('way_out_rehearsed', {
        workspace: workspace.root,
        state: stateOf(snapshot),
        thresholds: { evacuate_percent: snapshot.context.policy.evacuate_percent },
        way_out: wayOut,
      });
    },

    async lease(repo: string): Promise<Envelope> {
      const home = await deps.homes.of(repo, false);
      const snapshot = (await registry.open(home.root)).snapshot();
      const { lease, root, cycle } = snapshot.context;
      return success('lease_shown', { workspace: root, checkout: home.checkout, state: stateOf(snapshot), cycle: cycle?.id ?? null, ...lease });
    },

    signal(body: SignalBody): Promise<Envelope> {
      const { repo, source, metric, used_percent, resets_at = null, observed_at = iso(), executor = null } = body;
      return send(repo, { type: 'READING', reading: { source, metric, used_percent, resets_at, observed_at, raw_sha256: null, executor } });
    },

    warning(body: WarningBody): Promise<Envelope> {
      const { repo, source, text, kind = 'other', recovers = null, retry_after_seconds = null, executor = null } = body;
      return send(repo, { type: 'WARNING', warning: { source, kind, text, recovers, retry_after_seconds, observed_at: iso(), raw_sha256: null, executor } });
    },

    prepare: (body: StageBody) => send(body.repo, { type: 'PREPARE', reason: body.reason ?? null }),
    now: (body: NowBody) => send(body.repo, { type: 'NOW', reason: body.reason ?? null, wait: body.wait ?? true }),

    /** The source agent finished its atomic step: the drain need not wait any longer. */
    async drained(repo: string): Promise<Envelope> {
      const home = await drainHome(repo);
      const envelope = await send(home, { type: 'DRAINED' });
      deps.drain.start(home);
      return envelope;
    },

    /** Clears a blocked reason and runs the drain again from its first unfinished step. */
    async resume(repo: string): Promise<Envelope> {
      const home = await drainHome(repo);
      const envelope = await send(home, { type: 'DRAIN_RESUME' });
      if (!envelope.error) deps.drain.start(home);
      return envelope;
    },

    /**
     * Ends a stage, an out leg or a return leg's drain (where the checkout's drain lives, as for resume).
     * The journal's CANCEL record is what makes it durable; the abandoned record beside the cycle is for
     * people and `handoff list/show`, and a failure to write it is said, not fatal.
     */
    async cancel(body: StageBody): Promise<Envelope> {
      const home = await deps.homes.of(body.repo, false);
      const envelope = await home.cancel(body.reason ?? null);
      const data = envelope.data as (AbandonedRecord & { cycle: string | null; changed?: boolean }) | null;
      if (envelope.code !== 'cancelled' || data?.changed !== true || data.cycle === null) return envelope;
      const record: AbandonedRecord = {
        cycle: data.cycle,
        leg: data.leg,
        at: data.at,
        reason: data.reason,
        step: data.step,
        blocked: data.blocked,
        kept_ref: data.kept_ref,
      };
      const written = await writeAbandoned(home.root, record).then(
        (path) => ({ record: path }),
        (error: unknown) => ({ note: `the abandoned record could not be written: ${(error as Error).message}; the journal has it` }),
      );
      return { ...envelope, data: { ...(envelope.data ?? {}), ...written } };
    },

    async check(repo: string): Promise<Envelope> {
      const workspace = await registry.open(await drainHome(repo));
      const snapshot = workspace.snapshot();
      return success(checkCode(snapshot, deps.drain.isRunning(workspace.root)), {
        ...statusView(snapshot, clock.now()),
        running: deps.drain.isRunning(workspace.root),
      });
    },

    async setCapsule(body: CapsuleBody): Promise<Envelope> {
      const root = await rootOf(body.repo);
      await registry.open(root);
      const capsule = parseCapsule(typeof body.capsule === 'string' ? capsuleFromMarkdown(body.capsule) : body.capsule);
      const sha256 = await writeCapsule(root, capsule);
      const { outcome, snapshot } = await registry.dispatch(root, { type: 'CAPSULE_SET', capsule: { sha256, updated_at: iso(), error: null } });
      return success('capsule_saved', { workspace: root, state: stateOf(snapshot), sha256, changed: outcome.changed, capsule });
    },

    async showCapsule(repo: string): Promise<Envelope> {
      const root = await rootOf(repo);
      const read = await readCapsule(root);
      return success('capsule_shown', { workspace: root, ...read });
    },
    // Carried out where the checkout's lease lives (daemon/lease/): from a receiver's checkout every verb
    // acts on the cycle it took over, and the token fences them there.
    acquire: async (body: LeaseAcquireBody) => (await deps.homes.of(body.repo, true)).acquire(body.as),
    renew: async (body: LeaseTokenBody) => (await deps.homes.of(body.repo, true)).renew(body.token),
    release: async (body: LeaseTokenBody) => (await deps.homes.of(body.repo, true)).release(body.token),
    breakLease: async (body: LeaseBreakBody) => (await deps.homes.of(body.repo, true)).breakLease(body.reason),
    returnLeg: async (body: ReturnBody) => (await deps.homes.of(body.repo, false)).returnLeg(body.token, body.wait ?? true),
    async close(body: CloseBody): Promise<Envelope> {
      if (!body.one_way)
        return failure(
          'usage_error',
          'only a one-way cycle is closed by hand',
          'use `handoff close --one-way`; an emergency-return cycle closes when the primary accepts the return',
        );
      return (await deps.homes.of(body.repo, false)).close(body.token);
    },

    /** The file is the switch; it is written first so that the daemon's own restart sees it too. */
    async pause(body: PauseBody): Promise<Envelope> {
      const { path, root } = await pauseFile(body);
      await writeFileAtomic(path, `${body.reason ?? ''}\n`, 0o600);
      // Applied from the file, behind any change the watcher read before: a racing read cannot land after it.
      const pause = await deps.applyPauseFile(path);
      if (pause === null)
        return failure(
          'wrong_state',
          `${path} was removed (an unpause) before this pause took effect: nothing is paused`,
          'run `handoff pause` again if it should be',
        );
      const affected = body.scope === 'global' ? registry.all() : [await registry.open(root ?? '')];
      return success('paused', { scope: body.scope, workspace: root, ...pause, offers: await carryToOffers(affected) });
    },

    /** Says what starts now: a reading held back while paused moves its workspace the moment the switch is lifted. */
    async unpause(body: PauseBody): Promise<Envelope> {
      const { path, root } = await pauseFile(body);
      const affected = body.scope === 'global' ? registry.all() : [await registry.open(root ?? '')];
      const before = new Map(affected.map((workspace) => [workspace.root, stateOf(workspace.snapshot())]));
      await rm(path, { force: true });
      await deps.applyPauseFile(path);
      const offers = await carryToOffers(affected);
      const started: StageStarted[] = affected
        .map((workspace) => workspace.snapshot())
        .filter((snapshot) => stateOf(snapshot) !== before.get(snapshot.context.root))
        .map((snapshot) => ({ ...stageMove(snapshot), workspace: snapshot.context.root, cycle: snapshot.context.cycle?.id ?? null }));
      return success('unpaused', { scope: body.scope, workspace: root, path, started, offers });
    },

    reloadConfig: deps.reloadConfig,

    stopping(): Envelope {
      return success('daemon_stopping', { pid: deps.info().pid });
    },

    stop(): void {
      deps.requestStop();
    },
  };
}

export type Service = ReturnType<typeof createService>;
export const statusOf = (envelope: Envelope): number => CODES[envelope.code].status;
