import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  checkCode,
  CODES,
  editPolicy,
  failure,
  HandoffError,
  leaseTravels,
  offerTravels,
  outcomeEnvelope,
  stateOf,
  statusView,
  success,
  travellingLeaseRefusal,
  type Envelope,
  type PauseInfo,
} from '../protocol/index.js';
import type {
  LeaseAcquireBody,
  LeaseBreakBody,
  LeaseTokenBody,
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
import { createRemoteLeaseMoves, outOffer, type ChainMoved } from './takeover/remote-lease-moves.js';
import { writeFileAtomic } from './store/index.js';
import type { WorkspaceRegistry } from './workspaces/registry.js';
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

  // Local lease verbs while the lease travels move the remote chain first (the one truth), then this machine.
  const chain = createRemoteLeaseMoves({ clock, timeoutMs: deps.leaseSync.timeoutMs });

  /** Where a lease verb acts: the workspace, what it holds now, and whether its lease lives on the remote. */
  async function leaseWhere(root: string, verb: 'acquire' | 'release' | 'break') {
    const workspace = await registry.open(root);
    // A lease that travels is read there first, as for status: another machine may have moved it.
    await deps.leaseSync.sync(workspace);
    const snapshot = workspace.snapshot();
    const { cycle, lease, paused } = snapshot.context;
    const state = stateOf(snapshot);
    return {
      refused: travellingLeaseRefusal(cycle, state, verb),
      travelling: leaseTravels(cycle, state) ? cycle : null,
      lease,
      paused: paused.global !== null || paused.workspace !== null,
    };
  }

  /** After the chain moved: the machine records the record's commit, so lease-sync does not apply it twice. */
  async function followHead(root: string, moved: ChainMoved): Promise<void> {
    await registry.dispatch(root, { type: 'LEASE_HEAD', lease_head: moved.head });
  }

  async function acquireLease(body: LeaseAcquireBody): Promise<Envelope> {
    const root = await rootOf(body.repo);
    const event = { type: 'LEASE_ACQUIRE' as const, executor: body.as };
    const where = await leaseWhere(root, 'acquire');
    if (where.refused !== null) return where.refused;
    // Held, or paused: the machine refuses it as for any lease, before anything travels.
    if (where.travelling === null || where.paused || where.lease.holder !== null) return send(root, event);
    const cycle = where.travelling;
    const moved = await chain.acquire(root, cycle.remote.name, cycle.id, cycle.remote.lease_head, body.as, where.lease.last_token);
    if (!moved.ok) return moved.envelope;
    // The chain's record is what this machine follows, as lease-sync would: the holder and its token, here.
    const { outcome, snapshot } = await registry.dispatch(root, {
      type: 'REMOTE_LEASE',
      lease: moved.record,
      lease_head: moved.head,
      return_drain: null,
      receiver_root: root,
    });
    const token = moved.record.holder?.token ?? null;
    if (snapshot.context.lease.holder?.token !== token) return outcomeEnvelope(outcome, snapshot);
    return success('lease_acquired', { workspace: root, state: stateOf(snapshot), token, remote: moved.remote, changed: true, note: null });
  }

  /**
   * A renew of a travelling lease asks the chain first, as status and the guard do: a holder broken on
   * another machine learns it here (stale_token). While the remote cannot be read (or its chain is
   * refused), `guard_when_lease_unverified: refuse` refuses the renew as it refuses edits; `last_known`
   * trusts the last known holder (docs/configuration.md).
   */
  async function renewLease(body: LeaseTokenBody): Promise<Envelope> {
    const home = await drainHome(body.repo);
    const event = { type: 'LEASE_RENEW' as const, token: body.token };
    const workspace = await registry.open(home);
    await deps.leaseSync.sync(workspace);
    const snapshot = workspace.snapshot();
    const { cycle, lease } = snapshot.context;
    const sync = deps.leaseSync.statusOf(home);
    const unverified = leaseTravels(cycle, stateOf(snapshot)) && sync?.unverified_since != null && deps.guardWhenUnverified === 'refuse';
    // A token this machine refuses anyway is refused as stale, whatever the remote says.
    if (!unverified || lease.holder?.token !== body.token) return send(home, event);
    return failure(
      'remote_unreachable',
      `the lease of cycle ${cycle?.id ?? ''} could not be verified on '${sync?.remote ?? ''}' since ${sync?.unverified_since ?? ''}: ${sync?.error ?? 'unknown'}`,
      'nothing was renewed (guard_when_lease_unverified: refuse); `handoff status` shows the sync error, retry when the remote answers',
    );
  }

  async function releaseLease(body: LeaseTokenBody): Promise<Envelope> {
    const home = await drainHome(body.repo);
    const event = { type: 'LEASE_RELEASE' as const, token: body.token };
    const where = await leaseWhere(home, 'release');
    if (where.refused !== null) return where.refused;
    // A token this machine already refuses is refused here, before the remote is asked.
    if (where.travelling === null || where.lease.holder?.token !== body.token) return send(home, event);
    const moved = await chain.letGo(home, where.travelling.remote.name, where.travelling.id, where.travelling.remote.lease_head, 'released', body.token);
    if (!moved.ok) return moved.envelope;
    const envelope = await send(home, event);
    await followHead(home, moved);
    return envelope;
  }

  async function breakLease(body: LeaseBreakBody): Promise<Envelope> {
    const root = await rootOf(body.repo);
    const event = { type: 'LEASE_BREAK' as const, reason: body.reason };
    const where = await leaseWhere(root, 'break');
    if (where.refused !== null) return where.refused;
    // Nobody holds it here: nothing travels to break, the machine records the operator's break.
    if (where.travelling === null || where.lease.holder === null) return send(root, event);
    const moved = await chain.letGo(root, where.travelling.remote.name, where.travelling.id, where.travelling.remote.lease_head, 'broken', null);
    if (!moved.ok) return moved.envelope;
    const envelope = await send(root, event);
    await followHead(root, moved);
    return envelope;
  }

  /**
   * An out leg whose offer went out through a remote is withdrawn there first (a `withdrawn` record):
   * a receiver that took it before is the winner (`lease_held`), and nothing changes here.
   */
  async function withdrawn(home: string): Promise<{ head: string | null } | Envelope> {
    const snapshot = (await registry.open(home)).snapshot();
    const cycle = snapshot.context.cycle;
    const state = stateOf(snapshot);
    if (cycle === null || cycle.return_drain !== null || (state !== 'EVACUATE' && state !== 'HANDOFF_READY')) return { head: null };
    // Once the publish step may have pushed, the remote is asked even when its answer never came back:
    // a cancel that cannot read it is refused (remote_unreachable), never done here alone.
    const offer = outOffer(cycle);
    if (offer === null) return { head: null };
    const moved = await chain.withdraw(home, offer.remote, cycle.id, offer.known, offer.manifest, snapshot.context.lease.last_token);
    if (moved.ok) return { head: moved.head };
    // Refused because a receiver won: this machine follows the remote now rather than at the next sync.
    if (moved.envelope.code === 'lease_held') await deps.leaseSync.sync(await registry.open(home));
    return moved.envelope;
  }

  /**
   * A return on offer through the remote, cancelled by the holder that offered it (the primary may be gone
   * for good): the chain is given back to that holder first (a `taken` record, its token kept). A primary
   * that took the work back first wins (`lease_held`), and this machine follows it to CLOSED.
   */
  async function withdrawnReturn(home: string): Promise<{ head: string | null } | Envelope> {
    const snapshot = (await registry.open(home)).snapshot();
    const cycle = snapshot.context.cycle;
    const token = snapshot.context.lease.holder?.token ?? cycle?.receiver?.token;
    if (stateOf(snapshot) !== 'RETURN_HANDOFF_READY' || cycle === null || cycle.remote === null || !offerTravels(cycle) || token === undefined) {
      return { head: null };
    }
    const moved = await chain.withdrawReturn(home, cycle.remote.name, cycle.id, cycle.remote.lease_head, token);
    if (moved.ok) return { head: moved.head };
    if (moved.envelope.code === 'lease_held') await deps.leaseSync.sync(await registry.open(home));
    return moved.envelope;
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
    async status(repo: string, poll: { afterChange: number; waitMs: number | null } | null = null): Promise<Envelope> {
      // A receiver's checkout answers with the cycle it took over (TAKEOVER, its holder, its ways on),
      // so the agent working there, and the edit guard, see what it holds rather than its own idle workspace.
      const checkout = await rootOf(repo);
      const taken = deps.takeover.receiving(checkout);
      const workspace = await registry.open(taken?.home ?? checkout);
      if (poll !== null) await workspace.changedSince(poll.afterChange, Math.min(poll.waitMs ?? LONG_POLL_MS, MAX_LONG_POLL_MS));
      // A lease that travels through the remote is read there first: another machine may have moved it.
      await deps.leaseSync.sync(workspace);
      const current = deps.takeover.receiving(checkout);
      const receiving = current === null ? null : { ...current, checkout };
      const leaseSync = deps.leaseSync.statusOf(workspace.root);
      // Read together: a change applied during the awaits below must not be reported as seen.
      const snapshot = workspace.snapshot();
      const change = workspace.change;
      const quality = await capsuleQuality(workspace.root, (await readCapsule(workspace.root)).capsule, snapshot.context);
      const edits = editPolicy(stateOf(snapshot), leaseSync?.unverified_since ?? null, deps.guardWhenUnverified);
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

    async lease(repo: string): Promise<Envelope> {
      const checkout = await rootOf(repo);
      const workspace = await registry.open(deps.takeover.receiving(checkout)?.home ?? checkout);
      const snapshot = workspace.snapshot();
      const { lease, root, cycle } = snapshot.context;
      return success('lease_shown', { workspace: root, checkout, state: stateOf(snapshot), cycle: cycle?.id ?? null, ...lease });
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
      const home = await drainHome(body.repo);
      const ready = stateOf((await registry.open(home)).snapshot()) === 'RETURN_HANDOFF_READY';
      const offer = ready ? await withdrawnReturn(home) : await withdrawn(home);
      if ('authority' in offer) return offer;
      const { outcome, snapshot } = await registry.dispatch(home, { type: 'CANCEL', reason: body.reason ?? null, withdrawn: offer.head });
      const answered = outcomeEnvelope(outcome, snapshot);
      // The remote chain's `withdrawn` record, when the offer had gone out through a remote.
      const envelope = offer.head === null || answered.error ? answered : { ...answered, data: { ...(answered.data ?? {}), withdrawn: offer.head } };
      const data = outcome.data as (AbandonedRecord & { cycle: string | null }) | null;
      if (outcome.code !== 'cancelled' || !outcome.changed || data === null || data.cycle === null) return envelope;
      const record: AbandonedRecord = {
        cycle: data.cycle,
        leg: data.leg,
        at: data.at,
        reason: data.reason,
        step: data.step,
        blocked: data.blocked,
        kept_ref: data.kept_ref,
      };
      const written = await writeAbandoned(home, record).then(
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
    acquire: acquireLease,
    // From a receiver's checkout these act on the cycle it took over; the token fences them there.
    renew: renewLease,
    release: releaseLease,
    breakLease,

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
      return success('paused', { scope: body.scope, workspace: root, ...pause });
    },

    async unpause(body: PauseBody): Promise<Envelope> {
      const { path, root } = await pauseFile(body);
      await rm(path, { force: true });
      await deps.applyPauseFile(path);
      return success('unpaused', { scope: body.scope, workspace: root, path });
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
