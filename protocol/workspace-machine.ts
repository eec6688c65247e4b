import { and, assertEvent, assign, not, setup } from 'xstate';
import type { Profile } from '../schemas/config.schema.js';
import type { ProviderWarning, Reading } from '../schemas/telemetry.schema.js';
import type { WayOut } from '../schemas/way-out.schema.js';
import type { Code } from './codes.js';
import { formatCycleId } from './cycle-id.js';
import { offeredAcceptWords } from './accept-command.js';
import * as leaseRules from './lease-rules.js';
import { assess, credibility, describeReading, readingKey, type PressurePolicy } from './pressure-policy.js';
import { retainReadings } from './reading-retention.js';
import { DRAIN_STEPS, newDrain, REVISION_STEPS, type DrainProgress } from './drain-plan.js';
import type { CapsuleState, PauseInfo, RemoteTracking, VerifiedCheckpoint, WorkspaceEvent } from './workspace-events.js';
import { runningDrain } from './running-drain.js';

// Re-exported so the machine's other readers keep one import; the CLI imports running-drain.js itself.
export { runningDrain };

export const STATES = ['NORMAL', 'PREPARE', 'EVACUATE', 'HANDOFF_READY', 'TAKEOVER', 'RETURN_HANDOFF_READY', 'CLOSED'] as const;
export type WorkspaceState = (typeof STATES)[number];

export type { Profile } from '../schemas/config.schema.js';

export interface Trigger {
  readonly kind: 'telemetry' | 'provider_warning' | 'manual';
  readonly reason: string;
  /** Only observed readings, never an estimate. */
  readonly readings: readonly Reading[];
}

export interface Cycle {
  readonly id: string;
  readonly started_at: string;
  readonly trigger: Trigger;
  readonly profile: Profile;
  readonly checkpoint: VerifiedCheckpoint | null;
  readonly return_checkpoint: VerifiedCheckpoint | null;
  readonly drain: DrainProgress;
  /** Who took the cycle over, from which work tree (null: on another machine), with which token (the return is fenced by it). */
  readonly receiver: { readonly executor: string; readonly root: string | null; readonly token: number } | null;
  /** Set when the lease also travels through a git remote (`refs/handoff/lease/<cycle>`). */
  readonly remote: RemoteTracking | null;
  /** The return leg's drain, once the holder ran `handoff return`. */
  readonly return_drain: DrainProgress | null;
  /**
   * A return leg's drain that `handoff cancel` ended: the next `handoff return` continues its revisions,
   * so the create-once package files and the `-return` ref it already wrote are never written over.
   */
  readonly abandoned_return?: DrainProgress | null;
}

/** What the last event did, for the caller: a registry code and whether anything changed. */
export interface Outcome {
  readonly code: Code;
  readonly message: string | null;
  readonly hint: string | null;
  readonly data: Readonly<Record<string, unknown>> | null;
  /** false: the event is refused or moot; the daemon neither journals nor applies it. */
  readonly changed: boolean;
}

export interface WorkspaceContext {
  readonly root: string;
  readonly policy: PressurePolicy;
  readonly profile: Profile;
  /** Time and entropy of the event being handled: the machine's only clock and dice. */
  readonly now: number;
  readonly entropy: string;
  /** The state the workspace is in (its top level), set on entry: what a refusal names. */
  readonly stage: WorkspaceState;
  readonly stage_since: string;
  readonly readings: Readonly<Record<string, Reading>>;
  readonly warnings: readonly ProviderWarning[];
  readonly paused: { readonly global: PauseInfo | null; readonly workspace: PauseInfo | null };
  readonly cycle: Cycle | null;
  readonly blocked: string | null;
  readonly lease: leaseRules.LeaseState;
  readonly capsule: CapsuleState | null;
  /** When PREPARE began (kept through EVACUATE): a capsule written before it is stale. */
  readonly prepare_since: string | null;
  /**
   * When an operator asked for PREPARE (`handoff prepare`); null when pressure brought it. A manual
   * PREPARE holds until a reading observed after the request shows relief, or the workspace returns to
   * NORMAL: readings that were already there when the operator asked are not news.
   */
  readonly prepare_requested_at?: string | null;
  /**
   * When an operator last ran `handoff cancel`: readings observed until then are not news, so the
   * pressure that was already there cannot start the cancelled stage again by itself.
   */
  readonly cancelled_at?: string | null;
  /** What PREPARE's last rehearsal proved about the way out (daemon/rehearsal/); absent before the first. */
  readonly way_out?: WayOut | null;
  readonly outcome: Outcome;
}

export interface WorkspaceInput {
  readonly root: string;
  readonly policy: PressurePolicy;
  readonly profile: Profile;
  readonly at: number;
}

/** The input of an actor that only computes a transition (see the machine's context factory). */
const DETACHED: WorkspaceInput = {
  root: '',
  policy: { prepare_percent: 80, evacuate_percent: 90, hysteresis_percent: 5, freshness_seconds: 600 },
  profile: 'emergency-return',
  at: 0,
};

/** Kept for status and the manifest; older warnings live in the journal. */
const WARNINGS_KEPT = 20;

const iso = (ms: number): string => new Date(ms).toISOString();

function done(code: Code, data: Record<string, unknown> | null = null, changed = true): Outcome {
  return { code, message: null, hint: null, data, changed };
}

function refused(code: Code, message: string, hint: string): Outcome {
  return { code, message, hint, data: null, changed: false };
}

/** The readings automatic moves judge by: those observed after the last `handoff cancel` (all of them without one). */
function readingList(context: WorkspaceContext): Reading[] {
  const readings = Object.values(context.readings);
  const since = context.cancelled_at ?? null;
  return since === null ? readings : readings.filter((r) => Date.parse(r.observed_at) > Date.parse(since));
}
/** How the machine itself judges the pressure now: the readings since the last `handoff cancel`. */
export const assessNow = (context: WorkspaceContext) => assess(readingList(context), context.now, context.policy);

function newCycle(context: WorkspaceContext, trigger: Trigger, noWait = false): Cycle {
  return {
    id: formatCycleId(context.now, context.entropy),
    started_at: iso(context.now),
    trigger,
    profile: context.profile,
    checkpoint: null,
    return_checkpoint: null,
    drain: newDrain('out', noWait, iso(context.now)),
    receiver: null,
    return_drain: null,
    remote: null,
  };
}

/**
 * The return leg's drain: new, or — after a cancelled return — the next revision of the abandoned one,
 * chained to its snapshot and manifests like a revision made because the work tree moved.
 */
function returnDrain(cycle: Cycle, noWait: boolean, at: string): DrainProgress {
  const fresh = newDrain('return', noWait, at);
  const old = cycle.abandoned_return ?? null;
  if (old === null) return fresh;
  const commit = old.steps.snapshot?.summary['commit'];
  return {
    ...fresh,
    revision: old.revision + 1,
    revision_at: at,
    manifests: old.manifests,
    previous_commit: typeof commit === 'string' ? commit : old.previous_commit,
  };
}

/** What `handoff cancel` keeps of an ended drain: the checkpoint ref it made, for the record. */
function keptRef(drain: DrainProgress | null): string | null {
  const ref = drain?.steps.snapshot?.summary['ref'];
  return typeof ref === 'string' ? ref : null;
}

/** A drain whose lease offer went out through a git remote: cancelling here could not withdraw it there. */
function offeredThroughRemote(drain: DrainProgress | null): boolean {
  const head = drain?.steps.offer?.summary['lease_head'];
  return typeof head === 'string' && head !== '';
}

/** The holder may end the cycle here with `handoff close --one-way`. */
export function closableOneWay(cycle: Cycle): boolean {
  return cycle.profile === 'one-way' || (cycle.return_drain === null && (cycle.abandoned_return ?? null) !== null);
}

/** The lease of this cycle is (or is being) offered through a git remote: only that chain can withdraw it. */
export function offerTravels(cycle: Cycle): boolean {
  // A return leg is offered through the remote only once its own offer step published it; the out
  // leg's offer (cycle.remote) was taken by the receiver and is not what a cancelled return withdraws.
  if (cycle.return_drain !== null) return offeredThroughRemote(cycle.return_drain);
  return cycle.remote !== null || offeredThroughRemote(cycle.drain);
}

/** A drain's identity for the runner's reports: the cycle, the leg and when that drain began. */
export function drainKey(cycle: Cycle, drain: DrainProgress): string {
  return `${cycle.id}/${drain.leg}/${drain.started_at}`;
}

/** Applies `change` to the running drain; the machine only calls it where one runs (EVACUATE, TAKEOVER.returning). */
function withDrain(context: WorkspaceContext, change: (drain: DrainProgress) => DrainProgress): Cycle | null {
  const cycle = context.cycle;
  if (cycle === null) return null;
  return context.stage === 'TAKEOVER' && cycle.return_drain !== null
    ? { ...cycle, return_drain: change(cycle.return_drain) }
    : { ...cycle, drain: change(cycle.drain) };
}

/** The first unfinished step of a drain (null when it waits for the agent or has finished). */
function currentStep(drain: DrainProgress): string | null {
  if (drain.waited === null) return null;
  return DRAIN_STEPS.find((step) => drain.steps[step] === undefined) ?? null;
}

/** A manual PREPARE relaxes only on a credible reading observed after the operator asked for it. */
function reliefSinceRequest(context: WorkspaceContext): boolean {
  const since = context.prepare_requested_at ?? null;
  if (since === null) return true;
  return readingList(context).some((r) => Date.parse(r.observed_at) > Date.parse(since) && credibility(r, context.now, context.policy).credible);
}

function telemetryTrigger(context: WorkspaceContext, line: number): Trigger {
  const { worst, pressing } = assessNow(context);
  const what = worst === null ? 'pressure' : describeReading(worst);
  return { kind: 'telemetry', reason: `${what} reached the ${line} % line`, readings: pressing.filter((r) => (r.used_percent ?? 0) >= line) };
}

/** The accept that takes the cycle on offer in this state, with its real id (the daemon knows it). */
const offered = (cycle: Cycle | null, leg: 'out' | 'return'): string => offeredAcceptWords(cycle ?? { id: 'CYCLE', remote: null }, leg).command;

function nothingToCancel(stage: WorkspaceState, cycle: Cycle | null): string {
  switch (stage) {
    case 'NORMAL':
      return 'nothing to cancel: no stage or drain is under way';
    case 'TAKEOVER':
      return 'nothing to cancel: no return leg is under way; the lease holder hands back with `handoff return`';
    case 'RETURN_HANDOFF_READY':
      return `nothing to cancel: the return is ready; the primary takes the work back with \`${offered(cycle, 'return')}\``;
    case 'CLOSED':
      return 'nothing to cancel: the cycle is closed';
    default:
      return `nothing to cancel in ${stage}`;
  }
}

/** The way on from each state, named with the cycle's real id. */
function stateHint(stage: WorkspaceState, cycle: Cycle | null): string {
  switch (stage) {
    case 'NORMAL':
      return 'nothing to hand off yet: `handoff now` starts an evacuation';
    case 'PREPARE':
      return 'refresh the capsule; `handoff now` starts an evacuation';
    case 'EVACUATE':
      return 'wait for the drain to finish, or see `handoff status` for its blocked reason; `handoff cancel` gives it up';
    case 'HANDOFF_READY':
      return `a receiver takes over with \`${offered(cycle, 'out')}\``;
    case 'TAKEOVER':
      return 'the lease holder hands back with `handoff return`';
    case 'RETURN_HANDOFF_READY':
      return `the primary takes the work back with \`${offered(cycle, 'return')}\``;
    case 'CLOSED':
      return 'the cycle is closed; the next reading or `handoff now` starts a new one';
  }
}

/** What a running drain reports, the same in either leg (EVACUATE, TAKEOVER.returning). */
const DRAIN_REPORTS = {
  DRAIN_BLOCKED: [{ guard: 'staleDrain', actions: ['stamp', 'replyStaleDrain'] }, { actions: ['stamp', 'recordBlocked'] }],
  DRAINED: { actions: ['stamp', 'recordDrained'] },
  DRAIN_WAITED: [{ guard: 'staleDrain', actions: ['stamp', 'replyStaleDrain'] }, { actions: ['stamp', 'recordWaited'] }],
  DRAIN_STEP_DONE: [{ guard: 'staleDrain', actions: ['stamp', 'replyStaleDrain'] }, { actions: ['stamp', 'recordStep'] }],
  DRAIN_REVISION: [{ guard: 'staleDrain', actions: ['stamp', 'replyStaleDrain'] }, { actions: ['stamp', 'startRevision'] }],
  DRAIN_RESUME: [{ guard: 'paused', actions: ['stamp', 'replyPaused'] }, { actions: ['stamp', 'clearBlocked'] }],
} as const;

export const workspaceMachine = setup({
  types: {} as { context: WorkspaceContext; events: WorkspaceEvent; input: WorkspaceInput },
  guards: {
    paused: ({ context }) => context.paused.global !== null || context.paused.workspace !== null,
    atEvacuateLine: ({ context }) => assessNow(context).level === 'evacuate',
    atPrepareLine: ({ context }) => assessNow(context).level === 'prepare',
    canRelax: ({ context }) => assessNow(context).canRelax && reliefSinceRequest(context),
    checkpointVerified: ({ event }) => {
      assertEvent(event, ['CHECKPOINT_VERIFIED', 'RETURN_READY']);
      return event.checkpoint.verified;
    },
    holdsLease: ({ context, event }) => {
      assertEvent(event, ['RETURN_READY', 'CLOSE_ONE_WAY', 'RETURN_START', 'ACCEPT_UNDONE']);
      return context.lease.holder?.token === event.token;
    },
    // The accept imported the cycle from a remote: this workspace only ever held it as the receiver.
    undoesImport: ({ event }) => event.type === 'ACCEPT_UNDONE' && event.imported,
    // The chain offers the lease again after the accept that took it was undone (its token stays spent, so
    // an offer record read before that accept, with a lower last_token, is not this).
    remoteReoffered: ({ context, event }) =>
      event.type === 'REMOTE_LEASE' && event.lease.state === 'offered' && event.lease.last_token >= context.lease.last_token,
    // A travelling cycle this workspace imported as the receiver (its drain ran elsewhere: no inspect step here).
    importedCycle: ({ context }) => context.cycle !== null && context.cycle.drain.steps.inspect === undefined,
    // A runner's report about a drain that is no longer the running one (cancelled while a step ran).
    staleDrain: ({ context, event }) => {
      const key = (event as { drain?: string }).drain;
      const drain = runningDrain(context.stage, context.cycle);
      return key !== undefined && (context.cycle === null || drain === null || key !== drainKey(context.cycle, drain));
    },
    remoteTaken: ({ event }) => event.type === 'REMOTE_LEASE' && event.lease.state === 'taken' && event.lease.holder !== null,
    remoteReturned: ({ event }) => event.type === 'REMOTE_LEASE' && event.lease.state === 'return_offered' && event.return_drain !== null,
    remoteClosed: ({ event }) => event.type === 'REMOTE_LEASE' && event.lease.state === 'closed' && event.lease.holder !== null,
    remoteMoved: ({ context, event }) =>
      event.type === 'REMOTE_LEASE' && event.lease.holder !== null && event.lease.holder.token !== context.lease.holder?.token,
    // A one-way cycle closes by hand; so does any cycle whose last return leg was cancelled (a return
    // that cannot be made must not keep the holder from finishing: docs/concepts.md, "Ways out").
    closable: ({ context }) => context.cycle !== null && closableOneWay(context.cycle),
    // `handoff cancel` only withdraws what this daemon alone offered; a lease on offer through the remote is not.
    // A cancel whose `withdrawn` record the remote took first (daemon/lease/travelling-home.ts) is not refused: the chain withdrew it.
    // The holder's cancel of a return on offer through the remote, whose `taken` record the remote took (daemon/lease/travelling-home.ts).
    returnWithdrawn: ({ context, event }) => event.type === 'CANCEL' && (event.withdrawn ?? null) !== null && context.cycle?.return_drain != null,
    offerTravels: ({ context, event }) =>
      context.cycle !== null && offerTravels(context.cycle) && !(event.type === 'CANCEL' && (event.withdrawn ?? null) !== null),
  },
  actions: {
    stamp: assign(({ event }) => ({ now: event.at, entropy: event.entropy })),
    enterStage: assign(({ context }, params: { stage: WorkspaceState }) => ({ stage: params.stage, stage_since: iso(context.now) })),
    markPrepare: assign(({ context }) => ({ prepare_since: context.prepare_since ?? iso(context.now) })),
    clearPrepare: assign({ prepare_since: null, prepare_requested_at: null }),
    recordReading: assign(({ context, event }) => {
      assertEvent(event, 'READING');
      const reading = event.reading;
      const verdict = credibility(reading, context.now, context.policy);
      if (!verdict.credible) {
        return { outcome: { ...done('reading_not_credible', { reason: verdict.reason }, false), message: `${verdict.message}; nothing changed` } };
      }
      const key = readingKey(reading);
      const previous = context.readings[key];
      if (previous !== undefined && Date.parse(previous.observed_at) > Date.parse(reading.observed_at)) {
        return {
          outcome: {
            ...done('reading_not_credible', { reason: 'superseded' }, false),
            message: `a newer ${reading.metric} reading from ${reading.source} is already recorded; nothing changed`,
          },
        };
      }
      const readings = retainReadings({ ...context.readings, [key]: reading }, context.now, context.policy);
      return { readings, outcome: done('reading_recorded', { key }) };
    }),
    recordWarning: assign(({ context, event }) => {
      assertEvent(event, 'WARNING');
      return { warnings: [...context.warnings, event.warning].slice(-WARNINGS_KEPT), outcome: done('warning_recorded') };
    }),
    startTelemetryCycle: assign(({ context }) => ({
      cycle: newCycle(context, telemetryTrigger(context, context.policy.evacuate_percent)),
      blocked: null,
    })),
    startWarningCycle: assign(({ context, event }) => {
      assertEvent(event, 'WARNING');
      const w = event.warning;
      return { cycle: newCycle(context, { kind: 'provider_warning', reason: `${w.kind} from ${w.source}: ${w.text}`, readings: [] }), blocked: null };
    }),
    startManualCycle: assign(({ context, event }) => {
      assertEvent(event, 'NOW');
      return {
        cycle: newCycle(context, { kind: 'manual', reason: event.reason ?? 'handoff now', readings: assessNow(context).pressing }, !event.wait),
        blocked: null,
        outcome: done('evacuation_started'),
      };
    }),
    replyPrepareEntered: assign(({ context }) => ({ prepare_requested_at: iso(context.now), outcome: done('prepare_entered') })),
    replyAlreadyPrepare: assign({ outcome: done('prepare_entered', null, false) }),
    replyAlreadyEvacuating: assign({ outcome: done('evacuation_started', null, false) }),
    replyPaused: assign(({ context }) => {
      const pause = context.paused.workspace ?? context.paused.global;
      return {
        outcome: refused(
          'paused_denied',
          `paused by ${pause?.path ?? 'the kill switch'}${pause?.reason ? ` (${pause.reason})` : ''}`,
          'run `handoff unpause` (or remove the PAUSE file) first',
        ),
      };
    }),
    replyWrongState: assign(({ context, event }) => ({
      outcome: refused('wrong_state', `${event.type.toLowerCase()} is not possible in ${context.stage}`, stateHint(context.stage, context.cycle)),
    })),
    clearCycle: assign({ cycle: null, blocked: null }),
    setPause: assign(({ context, event }) => {
      assertEvent(event, 'PAUSE_SET');
      const code = event.pause === null ? 'unpaused' : 'paused';
      // The API writes the PAUSE file and the watcher then sees it: the second report is moot. A
      // reason written after the file appeared (an editor's save) is news, and keeps the first `since`.
      const current = context.paused[event.scope];
      const next = event.pause;
      if (current === null && next === null) return { outcome: done(code, null, false) };
      if (current !== null && next !== null && current.path === next.path) {
        if (current.reason === next.reason) return { outcome: done(code, null, false) };
        return { paused: { ...context.paused, [event.scope]: { ...next, since: current.since } }, outcome: done(code) };
      }
      return { paused: { ...context.paused, [event.scope]: next }, outcome: done(code) };
    }),
    setPolicy: assign(({ event }) => {
      assertEvent(event, 'CONFIG_SET');
      return { policy: event.policy, profile: event.profile, outcome: done('ok') };
    }),
    leaseAcquire: assign(({ context, event }) => {
      assertEvent(event, 'LEASE_ACQUIRE');
      const decision = leaseRules.acquire(context.lease, event.executor, iso(context.now));
      // An offer is taken by the accept that verifies it: named here with the cycle's id and where it is run.
      if (!decision.ok)
        return { outcome: refused(decision.code, decision.message, context.lease.offered ? stateHint(context.stage, context.cycle) : decision.hint) };
      return { lease: decision.lease, outcome: done('lease_acquired', { token: decision.lease.last_token }) };
    }),
    leaseRenew: assign(({ context, event }) => {
      assertEvent(event, 'LEASE_RENEW');
      const decision = leaseRules.renew(context.lease, event.token, iso(context.now));
      if (!decision.ok) return { outcome: refused(decision.code, decision.message, decision.hint) };
      return { lease: decision.lease, outcome: done('lease_renewed', { token: event.token }) };
    }),
    leaseRelease: assign(({ context, event }) => {
      assertEvent(event, 'LEASE_RELEASE');
      const decision = leaseRules.release(context.lease, event.token);
      if (!decision.ok) return { outcome: refused(decision.code, decision.message, decision.hint) };
      return { lease: decision.lease, outcome: done('lease_released', { token: event.token }) };
    }),
    leaseBreak: assign(({ context, event }) => {
      assertEvent(event, 'LEASE_BREAK');
      const lease = leaseRules.breakLease(context.lease, event.reason, iso(context.now));
      return { lease, outcome: done('lease_broken', { last_break: lease.last_break }) };
    }),
    recordBlocked: assign(({ context, event }) => {
      assertEvent(event, 'DRAIN_BLOCKED');
      // When it stopped: a stopped step's time is how long it ran, not how long ago it failed.
      const stopped = context.cycle === null ? {} : { cycle: withDrain(context, (drain) => ({ ...drain, blocked_at: iso(context.now) })) };
      return { ...stopped, blocked: event.reason, outcome: done('drain_blocked', { blocked: event.reason, step: event.step }) };
    }),
    recordDrained: assign(({ context }) => ({
      cycle: withDrain(context, (drain) => ({ ...drain, drained_at: drain.drained_at ?? iso(context.now) })),
      outcome: done('ok', null, runningDrain(context.stage, context.cycle)?.drained_at === null),
    })),
    recordWaited: assign(({ context, event }) => {
      assertEvent(event, 'DRAIN_WAITED');
      return {
        cycle: withDrain(context, (drain) => ({ ...drain, waited: { at: iso(context.now), why: event.why }, revision_at: iso(context.now) })),
        outcome: done('ok'),
      };
    }),
    recordStep: assign(({ context, event }) => {
      assertEvent(event, 'DRAIN_STEP_DONE');
      const cycle = withDrain(context, (drain) => ({
        ...drain,
        steps: { ...drain.steps, [event.step]: event.record },
        manifests: event.step === 'package' && event.record.sha256 !== null ? [...drain.manifests, event.record.sha256] : drain.manifests,
      }));
      return { cycle, blocked: null, outcome: done('ok', { step: event.step }) };
    }),
    startRevision: assign(({ context, event }) => {
      assertEvent(event, 'DRAIN_REVISION');
      const cycle = withDrain(context, (drain) => ({
        ...drain,
        revision: drain.revision + 1,
        revision_at: iso(context.now),
        previous_commit: event.previous_commit,
        steps: Object.fromEntries(Object.entries(drain.steps).filter(([step]) => !(REVISION_STEPS as readonly string[]).includes(step))),
      }));
      return { cycle, outcome: done('ok', { reason: event.reason }) };
    }),
    recordLeaseHead: assign(({ context, event }) => {
      assertEvent(event, 'LEASE_HEAD');
      const cycle = context.cycle;
      if (cycle === null || cycle.remote === null) return { outcome: done('ok', null, false) };
      return {
        cycle: { ...cycle, remote: { ...cycle.remote, lease_head: event.lease_head } },
        outcome: done('ok', null, cycle.remote.lease_head !== event.lease_head),
      };
    }),
    importTakeover: assign(({ context, event }) => {
      assertEvent(event, 'IMPORT_TAKEOVER');
      const at = iso(context.now);
      const token = Math.max(event.token, context.lease.last_token + 1);
      return {
        cycle: { ...event.cycle, receiver: { executor: event.executor, root: event.receiver_root, token } },
        lease: {
          holder: { executor: event.executor, token, acquired_at: at, renewed_at: at },
          last_token: token,
          offered: false,
          last_break: context.lease.last_break,
        },
        blocked: null,
        outcome: done('accepted', { token }),
      };
    }),
    applyRemoteTaken: assign(({ context, event }) => {
      assertEvent(event, 'REMOTE_LEASE');
      const holder = event.lease.holder;
      const cycle = context.cycle;
      if (holder === null || cycle === null) return {};
      const at = iso(context.now);
      return {
        lease: {
          holder: { executor: holder.executor, token: holder.token, acquired_at: at, renewed_at: at },
          last_token: Math.max(context.lease.last_token, event.lease.last_token),
          offered: false,
          last_break: context.lease.last_break,
        },
        cycle: {
          ...cycle,
          // Taken on another machine (null), or by `handoff lease acquire` in a checkout of this one.
          receiver: { executor: holder.executor, root: event.receiver_root ?? null, token: holder.token },
          remote: cycle.remote === null ? null : { ...cycle.remote, lease_head: event.lease_head },
        },
        outcome: done('ok', { moved_to: holder.executor }),
      };
    }),
    // The accept is undone (its checkout failed): the lease is on offer again, nobody holds it, its token stays spent.
    undoAccept: assign(({ context, event }) => {
      assertEvent(event, ['ACCEPT_UNDONE', 'REMOTE_LEASE']);
      const cycle = context.cycle;
      const head = event.lease_head;
      const remote = cycle?.remote == null ? null : { ...cycle.remote, lease_head: head ?? cycle.remote.lease_head };
      const lastToken = Math.max(context.lease.last_token, event.type === 'REMOTE_LEASE' ? event.lease.last_token : event.token);
      return {
        lease: { holder: null, last_token: lastToken, offered: true, last_break: context.lease.last_break },
        cycle: cycle === null ? null : { ...cycle, receiver: null, remote },
        blocked: null,
        outcome: done('ok', { undone: event.type === 'ACCEPT_UNDONE' ? event.token : (context.lease.holder?.token ?? null), state: 'HANDOFF_READY' }),
      };
    }),
    // The receiver's side of an undone import: the cycle was only ever held here; its token stays spent.
    undoImport: assign(({ context, event }) => {
      assertEvent(event, ['ACCEPT_UNDONE', 'REMOTE_LEASE']);
      const lastToken = Math.max(context.lease.last_token, event.type === 'REMOTE_LEASE' ? event.lease.last_token : event.token);
      return {
        lease: { holder: null, last_token: lastToken, offered: false, last_break: context.lease.last_break },
        cycle: null,
        blocked: null,
        outcome: done('ok', { undone: event.type === 'ACCEPT_UNDONE' ? event.token : (context.lease.holder?.token ?? null), state: 'NORMAL' }),
      };
    }),
    applyRemoteReturn: assign(({ context, event }) => {
      assertEvent(event, 'REMOTE_LEASE');
      const cycle = context.cycle;
      if (cycle === null) return {};
      return {
        lease: { ...context.lease, offered: true },
        cycle: { ...cycle, return_drain: event.return_drain, remote: cycle.remote === null ? null : { ...cycle.remote, lease_head: event.lease_head } },
        outcome: done('ok'),
      };
    }),
    // The holder withdrew its return on the remote (or the chain moved on from there while this machine was away):
    // the return leg is abandoned here too, the lease held by the record's holder.
    followWithdrawnReturn: assign(({ context, event }) => {
      assertEvent(event, 'REMOTE_LEASE');
      const holder = event.lease.holder;
      const cycle = context.cycle;
      if (holder === null || cycle === null) return {};
      const at = iso(context.now);
      const same = context.lease.holder?.token === holder.token && cycle.receiver?.token === holder.token;
      const lastToken = Math.max(context.lease.last_token, event.lease.last_token);
      return {
        lease: same
          ? { ...context.lease, last_token: lastToken, offered: false }
          : {
              holder: { executor: holder.executor, token: holder.token, acquired_at: at, renewed_at: at },
              last_token: lastToken,
              offered: false,
              last_break: context.lease.last_break,
            },
        cycle: {
          ...cycle,
          receiver: same ? cycle.receiver : { executor: holder.executor, root: event.receiver_root ?? null, token: holder.token },
          return_drain: null,
          abandoned_return: cycle.return_drain,
          remote: cycle.remote === null ? null : { ...cycle.remote, lease_head: event.lease_head },
        },
        outcome: done('ok', { moved_to: holder.executor, return_withdrawn: true }),
      };
    }),
    clearBlocked: assign(({ context }) => ({
      blocked: null,
      outcome: { ...done('ok', { was_blocked: context.blocked }, context.blocked !== null), message: context.blocked === null ? 'nothing was blocked' : null },
    })),
    recordCapsule: assign(({ context, event }) => {
      assertEvent(event, 'CAPSULE_SET');
      const same = context.capsule?.sha256 === event.capsule.sha256 && context.capsule?.error === event.capsule.error;
      return { capsule: event.capsule, outcome: done('ok', null, !same) };
    }),
    // Readiness is never claimed for an unverified checkpoint; the drain stops there, blocked, so status
    // says why it does not finish (it used to be refused unchanged: status kept saying "checkpointing").
    recordUnverified: assign(() => {
      const reason = 'the checkpoint is not verified recoverable, so readiness is not claimed';
      return {
        blocked: reason,
        outcome: {
          ...done('drain_blocked', { blocked: reason, step: null }),
          message: reason,
          hint: 'run `handoff resume` to check again, or `handoff cancel` to give this leg up',
        },
      };
    }),
    offerLease: assign(({ context, event }) => {
      assertEvent(event, 'CHECKPOINT_VERIFIED');
      return {
        lease: { ...context.lease, offered: true },
        cycle: context.cycle === null ? null : { ...context.cycle, checkpoint: event.checkpoint, remote: event.remote },
        blocked: null,
        outcome: done('ok'),
      };
    }),
    grantAccepted: assign(({ context, event }) => {
      assertEvent(event, ['HANDOFF_ACCEPTED', 'RETURN_ACCEPTED']);
      const lease = leaseRules.grant(context.lease, event.executor, iso(context.now), event.token);
      const receiver = event.type === 'HANDOFF_ACCEPTED' ? { executor: event.executor, root: event.receiver_root, token: lease.last_token } : null;
      const cycle = context.cycle === null || receiver === null ? context.cycle : { ...context.cycle, receiver };
      return { lease, cycle, outcome: done('accepted', { token: lease.last_token }) };
    }),
    startReturn: assign(({ context, event }) => {
      assertEvent(event, 'RETURN_START');
      const cycle = context.cycle;
      const holder = context.lease.holder;
      if (cycle === null || holder === null) return {};
      // The return leg is fenced by the token of whoever holds the lease when it starts: after the
      // lease changed hands, the new holder's `handoff return` takes the fence over (and the old token is stale).
      const receiver = { executor: holder.executor, root: cycle.receiver?.root ?? null, token: event.token };
      const refenced = cycle.receiver?.token !== event.token;
      if (cycle.return_drain !== null) {
        if (!refenced) return { outcome: done('return_started', null, false) };
        return { cycle: { ...cycle, receiver }, outcome: done('return_started', { refenced: true }) };
      }
      return {
        cycle: { ...cycle, receiver, return_drain: returnDrain(cycle, !event.wait, iso(context.now)), abandoned_return: null },
        blocked: null,
        outcome: done('return_started'),
      };
    }),
    offerReturn: assign(({ context, event }) => {
      assertEvent(event, 'RETURN_READY');
      return {
        lease: { ...context.lease, offered: true },
        cycle: context.cycle === null ? null : { ...context.cycle, return_checkpoint: event.checkpoint },
        blocked: null,
        outcome: done('ok'),
      };
    }),
    replyStaleToken: assign(({ context }) => ({
      outcome: refused(
        'stale_token',
        'the token is not the current lease token',
        context.lease.holder === null ? 'nobody holds the lease' : `the lease is held by '${context.lease.holder.executor}'`,
      ),
    })),
    replyClosed: assign({ outcome: done('ok') }),
    replyStaleDrain: assign({
      outcome: refused(
        'wrong_state',
        'this report is about a drain that was cancelled; nothing changed',
        'the step it ran is kept on disk; `handoff status` shows the drain that is running now',
      ),
    }),
    // `handoff cancel` of a stage or an out leg: back to NORMAL. The holder keeps the lease; an offer is withdrawn.
    cancelCycle: assign(({ context, event }) => {
      assertEvent(event, 'CANCEL');
      const cycle = context.cycle;
      const at = iso(context.now);
      const record =
        cycle === null ? null : { cycle: cycle.id, leg: 'out', step: currentStep(cycle.drain), blocked: context.blocked, kept_ref: keptRef(cycle.drain) };
      return {
        cycle: null,
        blocked: null,
        cancelled_at: at,
        lease: { ...context.lease, offered: false },
        outcome: done('cancelled', {
          ...(record ?? { cycle: null, leg: null, step: null, blocked: null, kept_ref: null }),
          reason: event.reason,
          at,
          state: 'NORMAL',
        }),
      };
    }),
    // `handoff cancel` of a return leg: back to TAKEOVER without it; the holder keeps the lease and may return again.
    cancelReturn: assign(({ context, event }) => {
      assertEvent(event, 'CANCEL');
      const cycle = context.cycle;
      if (cycle === null || cycle.return_drain === null) return {};
      const at = iso(context.now);
      const drain = cycle.return_drain;
      // A return on offer through the remote was withdrawn there first: this machine records the chain's new head.
      const head = event.withdrawn ?? null;
      const remote = head === null || cycle.remote === null ? cycle.remote : { ...cycle.remote, lease_head: head };
      return {
        cycle: { ...cycle, return_drain: null, abandoned_return: drain, remote },
        lease: { ...context.lease, offered: false },
        blocked: null,
        cancelled_at: at,
        outcome: done('cancelled', {
          cycle: cycle.id,
          leg: 'return',
          step: currentStep(drain),
          blocked: context.blocked,
          kept_ref: keptRef(drain),
          reason: event.reason,
          at,
          state: 'TAKEOVER',
        }),
      };
    }),
    replyNothingToCancel: assign(({ context }) => ({
      outcome: refused('wrong_state', nothingToCancel(context.stage, context.cycle), stateHint(context.stage, context.cycle)),
    })),
    replyOfferTravels: assign(({ context }) => ({
      outcome: refused(
        'wrong_state',
        `the return of cycle ${context.cycle?.id ?? ''} is on offer through the git remote: the primary may be taking it back there`,
        `the primary takes it back with \`${offered(context.cycle, 'return')}\` in the source checkout; \`handoff status\` here follows the remote`,
      ),
    })),
    replyAlreadyCurrent: assign({ outcome: done('ok', null, false) }),
    recordWayOut: assign(({ context, event }) => {
      assertEvent(event, 'WAY_OUT');
      return { way_out: event.way_out, outcome: done('ok', null, JSON.stringify(context.way_out ?? null) !== JSON.stringify(event.way_out)) };
    }),
    // The drain is an effect: `step()` hands it to the daemon, which runs it once the change is journaled.
    startDrain: () => undefined,
    // So is PREPARE's rehearsal of the evacuation (daemon/rehearsal/).
    startRehearsal: () => undefined,
  },
}).createMachine({
  id: 'workspace',
  initial: 'NORMAL',
  // xstate's pure `transition()` builds a throwaway actor without input; its context is never used,
  // but a factory that throws there costs an exception on every event.
  context: ({ input = DETACHED }) => ({
    root: input.root,
    policy: input.policy,
    profile: input.profile,
    now: input.at,
    entropy: 'aaaaaa',
    stage: 'NORMAL',
    stage_since: iso(input.at),
    readings: {},
    warnings: [],
    paused: { global: null, workspace: null },
    cycle: null,
    blocked: null,
    lease: leaseRules.FREE_LEASE,
    capsule: null,
    prepare_since: null,
    prepare_requested_at: null,
    cancelled_at: null,
    outcome: done('ok', null, false),
  }),
  // Events that mean the same in every state; states override where they move. xstate tries the
  // deepest state's handlers first and the root's last, so what stands here is what is left over.
  on: {
    READING: { actions: ['stamp', 'recordReading'] },
    WARNING: { actions: ['stamp', 'recordWarning'] },
    PAUSE_SET: { actions: ['stamp', 'setPause'] },
    // A policy changed at start or live (`handoff config set`): NORMAL and PREPARE judge their readings
    // against the new lines at once (their `always`), so a lowered line they are above moves them; EVACUATE
    // and every later stage have no such rule, so no threshold ever moves a cycle back.
    CONFIG_SET: { actions: ['stamp', 'setPolicy'] },
    // The kill switch stops new authority too: the lease is not handed out while paused (docs/http-api.md).
    LEASE_ACQUIRE: [{ guard: 'paused', actions: ['stamp', 'replyPaused'] }, { actions: ['stamp', 'leaseAcquire'] }],
    LEASE_RENEW: { actions: ['stamp', 'leaseRenew'] },
    LEASE_RELEASE: { actions: ['stamp', 'leaseRelease'] },
    LEASE_BREAK: { actions: ['stamp', 'leaseBreak'] },
    CAPSULE_SET: { actions: ['stamp', 'recordCapsule'] },
    LEASE_HEAD: { actions: ['stamp', 'recordLeaseHead'] },
    WAY_OUT: { actions: ['stamp', 'recordWayOut'] },
    // A state with something to end takes CANCEL itself; everywhere else there is nothing to cancel.
    CANCEL: { actions: ['stamp', 'replyNothingToCancel'] },
    // Not allowed here: every event no state takes (or whose guards all fail) is answered `wrong_state`,
    // naming the state and its way on (stateHint); nothing changes.
    '*': { actions: 'replyWrongState' },
  },
  states: {
    NORMAL: {
      entry: [{ type: 'enterStage', params: { stage: 'NORMAL' } }, 'clearPrepare'],
      always: [
        { guard: and([not('paused'), 'atEvacuateLine']), target: 'EVACUATE', actions: 'startTelemetryCycle' },
        { guard: and([not('paused'), 'atPrepareLine']), target: 'PREPARE' },
      ],
      on: {
        IMPORT_TAKEOVER: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'TAKEOVER', actions: ['stamp', 'importTakeover'] },
        ],
        WARNING: [
          { guard: 'paused', actions: ['stamp', 'recordWarning'] },
          { target: 'EVACUATE', actions: ['stamp', 'recordWarning', 'startWarningCycle'] },
        ],
        PREPARE: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'PREPARE', actions: ['stamp', 'replyPrepareEntered'] },
        ],
        NOW: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'EVACUATE', actions: ['stamp', 'startManualCycle'] },
        ],
      },
    },
    PREPARE: {
      entry: [{ type: 'enterStage', params: { stage: 'PREPARE' } }, 'markPrepare', 'startRehearsal'],
      always: [
        { guard: and([not('paused'), 'atEvacuateLine']), target: 'EVACUATE', actions: 'startTelemetryCycle' },
        { guard: and([not('paused'), 'canRelax']), target: 'NORMAL' },
      ],
      on: {
        IMPORT_TAKEOVER: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'TAKEOVER', actions: ['stamp', 'importTakeover'] },
        ],
        WARNING: [
          { guard: 'paused', actions: ['stamp', 'recordWarning'] },
          { target: 'EVACUATE', actions: ['stamp', 'recordWarning', 'startWarningCycle'] },
        ],
        PREPARE: { actions: ['stamp', 'replyAlreadyPrepare'] },
        NOW: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'EVACUATE', actions: ['stamp', 'startManualCycle'] },
        ],
        // A way out, so allowed while paused: it starts nothing and hands no authority to anyone.
        CANCEL: { target: 'NORMAL', actions: ['stamp', 'cancelCycle'] },
      },
    },
    EVACUATE: {
      entry: [{ type: 'enterStage', params: { stage: 'EVACUATE' } }, 'startDrain'],
      on: {
        NOW: { actions: ['stamp', 'replyAlreadyEvacuating'] },
        ...DRAIN_REPORTS,
        CANCEL: [
          { guard: 'offerTravels', actions: ['stamp', 'replyOfferTravels'] },
          { target: 'NORMAL', actions: ['stamp', 'cancelCycle'] },
        ],
        CHECKPOINT_VERIFIED: [
          { guard: 'staleDrain', actions: ['stamp', 'replyStaleDrain'] },
          { guard: 'checkpointVerified', target: 'HANDOFF_READY', actions: ['stamp', 'offerLease'] },
          { actions: ['stamp', 'recordUnverified'] },
        ],
      },
    },
    HANDOFF_READY: {
      entry: { type: 'enterStage', params: { stage: 'HANDOFF_READY' } },
      on: {
        HANDOFF_ACCEPTED: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'TAKEOVER', actions: ['stamp', 'grantAccepted'] },
        ],
        // Withdraws the offer: no receiver took it yet, and one that tries now is refused.
        CANCEL: [
          { guard: 'offerTravels', actions: ['stamp', 'replyOfferTravels'] },
          { target: 'NORMAL', actions: ['stamp', 'cancelCycle'] },
        ],
        // Another machine took the lease through the remote: this source is frozen from now on.
        REMOTE_LEASE: [{ guard: 'remoteTaken', target: 'TAKEOVER', actions: ['stamp', 'applyRemoteTaken'] }, { actions: ['stamp', 'replyAlreadyCurrent'] }],
      },
    },
    // Public and journaled as 'TAKEOVER' (stateOf); the children only say whether the return leg's
    // drain runs, and restoring a journal picks the child from the cycle (restoreSnapshot).
    TAKEOVER: {
      entry: { type: 'enterStage', params: { stage: 'TAKEOVER' } },
      initial: 'held',
      on: {
        // `handoff return` starts the return leg; again from the current holder it is a no-op, or it
        // takes the leg's fence over after the lease changed hands (startReturn), and the drain goes on.
        RETURN_START: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { guard: not('holdsLease'), actions: ['stamp', 'replyStaleToken'] },
          { target: '.returning', actions: ['stamp', 'startReturn'] },
        ],
        CLOSE_ONE_WAY: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { guard: not('holdsLease'), actions: ['stamp', 'replyStaleToken'] },
          { guard: 'closable', target: 'CLOSED', actions: ['stamp', 'replyClosed'] },
        ],
        REMOTE_LEASE: [
          { guard: 'remoteReturned', target: 'RETURN_HANDOFF_READY', actions: ['stamp', 'applyRemoteReturn'] },
          // A machine that saw neither the hand-back nor the close (it was away): the cycle ended without it.
          { guard: 'remoteClosed', target: 'CLOSED', actions: ['stamp', 'applyRemoteTaken'] },
          { guard: and(['remoteTaken', 'remoteMoved']), actions: ['stamp', 'applyRemoteTaken'] },
          // The receiver undid its accept (its checkout failed) and offered the lease again on the chain.
          { guard: and(['remoteReoffered', 'importedCycle']), target: 'NORMAL', actions: ['stamp', 'undoImport'] },
          { guard: 'remoteReoffered', target: 'HANDOFF_READY', actions: ['stamp', 'undoAccept'] },
          { actions: ['stamp', 'replyAlreadyCurrent'] },
        ],
      },
      states: {
        // The holder works; nothing runs and there is nothing to cancel.
        held: {
          on: {
            // `accept --checkout` whose git move failed after the accept was journaled (daemon/takeover/checkout-move.ts):
            // the lease goes back where it was. Allowed while paused: it hands no authority to anyone.
            ACCEPT_UNDONE: [
              { guard: not('holdsLease'), actions: ['stamp', 'replyStaleToken'] },
              { guard: 'undoesImport', target: '#workspace.NORMAL', actions: ['stamp', 'undoImport'] },
              { target: '#workspace.HANDOFF_READY', actions: ['stamp', 'undoAccept'] },
            ],
          },
        },
        // The return leg's drain runs; it reports here as the out leg's does in EVACUATE.
        returning: {
          entry: 'startDrain',
          on: {
            ...DRAIN_REPORTS,
            // The return leg is fenced by the token of the holder who started it (cycle.receiver.token).
            RETURN_READY: [
              { guard: not('holdsLease'), actions: ['stamp', 'replyStaleToken'] },
              { guard: 'staleDrain', actions: ['stamp', 'replyStaleDrain'] },
              { guard: 'checkpointVerified', target: '#workspace.RETURN_HANDOFF_READY', actions: ['stamp', 'offerReturn'] },
              { actions: ['stamp', 'recordUnverified'] },
            ],
            CANCEL: [
              { guard: 'offerTravels', actions: ['stamp', 'replyOfferTravels'] },
              { target: 'held', actions: ['stamp', 'cancelReturn'] },
            ],
          },
        },
      },
    },
    RETURN_HANDOFF_READY: {
      entry: { type: 'enterStage', params: { stage: 'RETURN_HANDOFF_READY' } },
      on: {
        RETURN_ACCEPTED: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'CLOSED', actions: ['stamp', 'grantAccepted'] },
        ],
        // The holder on a travelling chain withdraws its return (`handoff cancel`): it holds the lease again and
        // may return again or close one-way. Anything else falls through to "nothing to cancel".
        CANCEL: { guard: 'returnWithdrawn', target: 'TAKEOVER', actions: ['stamp', 'cancelReturn'] },
        REMOTE_LEASE: [
          // The primary on another machine took the work back: this holder's part is over.
          { guard: 'remoteClosed', target: 'CLOSED', actions: ['stamp', 'applyRemoteTaken'] },
          // The holder withdrew its return on another machine: the lease is held again, this machine waits.
          { guard: 'remoteTaken', target: 'TAKEOVER', actions: ['stamp', 'followWithdrawnReturn'] },
          { actions: ['stamp', 'replyAlreadyCurrent'] },
        ],
      },
    },
    CLOSED: {
      entry: { type: 'enterStage', params: { stage: 'CLOSED' } },
      on: {
        IMPORT_TAKEOVER: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'TAKEOVER', actions: ['stamp', 'clearCycle', 'importTakeover'] },
        ],
        // A closed cycle stays visible until something starts the next one.
        READING: { target: 'NORMAL', actions: ['stamp', 'clearCycle', 'recordReading'] },
        WARNING: [
          { guard: 'paused', actions: ['stamp', 'recordWarning'] },
          { target: 'EVACUATE', actions: ['stamp', 'recordWarning', 'startWarningCycle'] },
        ],
        PREPARE: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'PREPARE', actions: ['stamp', 'clearCycle', 'replyPrepareEntered'] },
        ],
        NOW: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'EVACUATE', actions: ['stamp', 'startManualCycle'] },
        ],
      },
    },
  },
});
