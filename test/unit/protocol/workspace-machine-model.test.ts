import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  assess,
  credibility,
  runningDrain,
  stateOf,
  type Code,
  type Cycle,
  type DrainProgress,
  type WorkspaceContext,
  type WorkspaceEvent,
  type WorkspaceSnapshot,
  type WorkspaceState,
} from '../../../protocol/index.js';
import { historyArb, walk, type Body } from './machine-harness.js';

/**
 * Every event in every state the generated histories reach, against a small model of the protocol:
 * which state the event leads to, which registry code it answers and whether it changes anything.
 * Pressure is judged by the pressure policy (its own tests pin it); the model says which readings
 * count (those since the last `handoff cancel`) and when NORMAL and PREPARE move on them.
 */
interface Expected {
  readonly state: WorkspaceState;
  readonly code: Code;
  readonly changed: boolean;
  /** TAKEOVER's child: whether a return leg's drain runs. */
  readonly returning?: boolean;
}

const iso = (ms: number) => new Date(ms).toISOString();
const isPaused = (c: WorkspaceContext) => c.paused.workspace !== null || c.paused.global !== null;
const STARTS: readonly WorkspaceState[] = ['NORMAL', 'PREPARE', 'CLOSED'];
const after = (t: string, since: string | null | undefined) => since == null || Date.parse(t) > Date.parse(since);

/** Where NORMAL and PREPARE settle once the event is handled: pressure moves them unless paused. */
function settle(state: WorkspaceState, c: WorkspaceContext, at: number, requested: string | null, cancelled: string | null): WorkspaceState {
  if (isPaused(c) || (state !== 'NORMAL' && state !== 'PREPARE')) return state;
  const counted = Object.values(c.readings).filter((r) => after(r.observed_at, cancelled));
  const { level, canRelax } = assess(counted, at, c.policy);
  if (level === 'evacuate') return 'EVACUATE';
  if (state === 'NORMAL') return level === 'prepare' ? 'PREPARE' : 'NORMAL';
  const relief = requested === null || counted.some((r) => after(r.observed_at, requested) && credibility(r, at, c.policy).credible);
  return canRelax && relief ? 'NORMAL' : 'PREPARE';
}

/** A drain whose lease offer went out through a git remote (its offer step recorded the chain's head). */
const offeredThere = (drain: DrainProgress | null) => {
  const head = drain?.steps.offer?.summary['lease_head'];
  return typeof head === 'string' && head !== '';
};
/** Only the chain can withdraw an offer that travels: the return leg's own, or the out leg's. */
const travels = (cycle: Cycle) => (cycle.return_drain !== null ? offeredThere(cycle.return_drain) : cycle.remote !== null || offeredThere(cycle.drain));
/** One-way cycles close by hand; so does one whose last return leg was cancelled. */
const closable = (cycle: Cycle) => cycle.profile === 'one-way' || (cycle.return_drain === null && (cycle.abandoned_return ?? null) !== null);

const moot = (state: WorkspaceState, code: Code = 'ok'): Expected => ({ state, code, changed: false });
const moved = (state: WorkspaceState, code: Code = 'ok'): Expected => ({ state, code, changed: true });

/** The model: what the event must do in the snapshot it met (before pressure settles NORMAL and PREPARE). */
function model(body: Body<WorkspaceEvent>, before: WorkspaceSnapshot): Expected {
  const c = before.context;
  const from = stateOf(before);
  const paused = isPaused(c);
  const holder = c.lease.holder;
  // TAKEOVER's child says whether the return leg runs (a cycle may keep a return drain the lease moved away from).
  const returning = JSON.stringify(before.value) === '{"TAKEOVER":"returning"}';
  const drain = from === 'TAKEOVER' && !returning ? null : runningDrain(from, c.cycle);
  const wrong = moot(from, 'wrong_state');
  const fenced = 'token' in body && typeof body.token === 'number' && holder?.token === body.token;
  const staleFence = 'drain' in body && body.drain !== undefined && !body.drain.startsWith(c.cycle?.id ?? '-');
  const starts = STARTS.includes(from);
  switch (body.type) {
    case 'READING': {
      const key = `${body.reading.source}/${body.reading.metric}/${body.reading.executor ?? ''}`;
      const previous = Object.values(c.readings).find((r) => `${r.source}/${r.metric}/${r.executor ?? ''}` === key);
      if (previous !== undefined && Date.parse(previous.observed_at) > Date.parse(body.reading.observed_at)) return moot(from, 'reading_not_credible');
      return moved(from === 'CLOSED' ? 'NORMAL' : from, 'reading_recorded');
    }
    case 'WARNING':
      return moved(starts && !paused ? 'EVACUATE' : from, 'warning_recorded');
    case 'PREPARE':
      if (from === 'PREPARE') return moot(from, 'prepare_entered');
      if (from !== 'NORMAL' && from !== 'CLOSED') return wrong;
      return paused ? moot(from, 'paused_denied') : moved('PREPARE', 'prepare_entered');
    case 'NOW':
      if (from === 'EVACUATE') return moot(from, 'evacuation_started');
      if (!starts) return wrong;
      return paused ? moot(from, 'paused_denied') : moved('EVACUATE', 'evacuation_started');
    case 'PAUSE_SET': {
      const current = c.paused[body.scope];
      const same = current === null ? body.pause === null : body.pause !== null && current.path === body.pause.path && current.reason === body.pause.reason;
      return { state: from, code: body.pause === null ? 'unpaused' : 'paused', changed: !same };
    }
    case 'CONFIG_SET':
      return moved(from);
    case 'LEASE_ACQUIRE':
      if (paused) return moot(from, 'paused_denied');
      if (holder !== null) return moot(from, 'lease_held');
      return c.lease.offered ? wrong : moved(from, 'lease_acquired');
    case 'LEASE_RENEW':
      return fenced ? moved(from, 'lease_renewed') : moot(from, 'stale_token');
    case 'LEASE_RELEASE':
      return fenced ? moved(from, 'lease_released') : moot(from, 'stale_token');
    case 'LEASE_BREAK':
      return moved(from, 'lease_broken');
    case 'CAPSULE_SET':
      return { state: from, code: 'ok', changed: c.capsule?.sha256 !== body.capsule.sha256 || c.capsule.error !== body.capsule.error };
    case 'LEASE_HEAD':
      return { state: from, code: 'ok', changed: c.cycle?.remote != null && c.cycle.remote.lease_head !== body.lease_head };
    case 'WAY_OUT':
      return { state: from, code: 'ok', changed: JSON.stringify(c.way_out ?? null) !== JSON.stringify(body.way_out) };
    case 'DRAIN_BLOCKED':
    case 'DRAIN_WAITED':
    case 'DRAIN_STEP_DONE':
    case 'DRAIN_REVISION':
      if (drain === null) return wrong;
      if (staleFence) return moot(from, 'wrong_state');
      return { ...moved(from, body.type === 'DRAIN_BLOCKED' ? 'drain_blocked' : 'ok'), returning };
    case 'DRAINED':
      return drain === null ? wrong : { state: from, code: 'ok', changed: drain.drained_at === null, returning };
    case 'DRAIN_RESUME':
      if (drain === null) return wrong;
      if (paused) return moot(from, 'paused_denied');
      return { state: from, code: 'ok', changed: c.blocked !== null, returning };
    case 'CHECKPOINT_VERIFIED':
      if (from !== 'EVACUATE') return wrong;
      if (staleFence) return moot(from, 'wrong_state');
      return body.checkpoint.verified ? moved('HANDOFF_READY') : moved(from, 'drain_blocked');
    case 'HANDOFF_ACCEPTED':
      if (from !== 'HANDOFF_READY') return wrong;
      return paused ? moot(from, 'paused_denied') : moved('TAKEOVER', 'accepted');
    case 'RETURN_ACCEPTED':
      if (from !== 'RETURN_HANDOFF_READY') return wrong;
      return paused ? moot(from, 'paused_denied') : moved('CLOSED', 'accepted');
    case 'IMPORT_TAKEOVER':
      if (!starts) return wrong;
      return paused ? moot(from, 'paused_denied') : { ...moved('TAKEOVER', 'accepted'), returning: false };
    case 'RETURN_START': {
      if (from !== 'TAKEOVER') return wrong;
      if (paused) return { ...moot(from, 'paused_denied'), returning };
      if (!fenced) return { ...moot(from, 'stale_token'), returning };
      const same = returning && c.cycle?.receiver?.token === body.token;
      return { state: from, code: 'return_started', changed: !same, returning: true };
    }
    case 'RETURN_READY':
      if (!returning) return wrong;
      if (!fenced) return { ...moot(from, 'stale_token'), returning };
      if (staleFence) return { ...moot(from, 'wrong_state'), returning };
      return body.checkpoint.verified ? moved('RETURN_HANDOFF_READY') : { ...moved(from, 'drain_blocked'), returning };
    case 'CLOSE_ONE_WAY':
      if (from !== 'TAKEOVER') return wrong;
      if (paused) return { ...moot(from, 'paused_denied'), returning };
      if (!fenced) return { ...moot(from, 'stale_token'), returning };
      return c.cycle !== null && closable(c.cycle) ? moved('CLOSED') : { ...wrong, returning };
    case 'ACCEPT_UNDONE':
      if (from !== 'TAKEOVER' || returning) return wrong;
      if (!fenced) return { ...moot(from, 'stale_token'), returning: false };
      return moved(body.imported ? 'NORMAL' : 'HANDOFF_READY');
    case 'CANCEL': {
      const withdrawn = (body.withdrawn ?? null) !== null;
      const refused = c.cycle !== null && travels(c.cycle) && !withdrawn;
      if (from === 'PREPARE') return moved('NORMAL', 'cancelled');
      if (from === 'EVACUATE' || from === 'HANDOFF_READY') return refused ? wrong : moved('NORMAL', 'cancelled');
      if (returning) return refused ? { ...wrong, returning } : { ...moved('TAKEOVER', 'cancelled'), returning: false };
      if (from === 'RETURN_HANDOFF_READY' && withdrawn && c.cycle?.return_drain != null) return { ...moved('TAKEOVER', 'cancelled'), returning: false };
      return { ...wrong, returning: from === 'TAKEOVER' ? false : undefined };
    }
    case 'REMOTE_LEASE': {
      const { state, holder: by, last_token } = body.lease;
      if (from === 'HANDOFF_READY') return state === 'taken' && by !== null ? moved('TAKEOVER') : moot(from);
      if (from === 'RETURN_HANDOFF_READY') {
        if (state === 'closed' && by !== null) return moved('CLOSED');
        return state === 'taken' && by !== null ? { ...moved('TAKEOVER'), returning: false } : moot(from);
      }
      if (from !== 'TAKEOVER') return wrong;
      if (state === 'return_offered' && body.return_drain !== null) return moved('RETURN_HANDOFF_READY');
      if (state === 'closed' && by !== null) return moved('CLOSED');
      if (state === 'taken' && by !== null && by.token !== holder?.token) return { ...moved(from), returning };
      if (state === 'offered' && last_token >= c.lease.last_token) {
        return moved(c.cycle !== null && c.cycle.drain.steps.inspect === undefined ? 'NORMAL' : 'HANDOFF_READY');
      }
      return { ...moot(from), returning };
    }
  }
}

/** The state the event leads to once NORMAL and PREPARE judged the pressure they now see. */
function expected(body: Body<WorkspaceEvent>, before: WorkspaceSnapshot, next: WorkspaceSnapshot, at: number): Expected {
  const e = model(body, before);
  if (!e.changed) return e;
  const from = stateOf(before);
  const c = before.context;
  const cancelled = e.code === 'cancelled' ? iso(at) : (c.cancelled_at ?? null);
  // A manual PREPARE holds until relief observed after the request; it is forgotten on the way to NORMAL.
  const requested = body.type === 'PREPARE' ? iso(at) : from === 'PREPARE' && e.state === 'PREPARE' ? (c.prepare_requested_at ?? null) : null;
  const first = settle(e.state, next.context, at, requested, cancelled);
  const state = first === 'NORMAL' && e.state === 'PREPARE' ? settle('NORMAL', next.context, at, null, cancelled) : first;
  return { ...e, state };
}

describe('the workspace machine against its model', () => {
  it('every event in every reachable state goes where the protocol says, with the code it says', () => {
    fc.assert(
      fc.property(historyArb, (history) =>
        walk(history, ({ body, before, next, outcome, at }) => {
          const e = expected(body, before, next, at);
          const said = `${JSON.stringify(body).slice(0, 200)} in ${JSON.stringify(before.value)}${isPaused(before.context) ? ' (paused)' : ''}`;
          expect({ state: stateOf(next), code: outcome.code, changed: outcome.changed }, said).toEqual({ state: e.state, code: e.code, changed: e.changed });
          if (e.returning !== undefined && stateOf(next) === 'TAKEOVER') expect(next.value, said).toEqual({ TAKEOVER: e.returning ? 'returning' : 'held' });
          // What the daemon drops must not have changed anything but the answer.
          if (!outcome.changed)
            expect({ ...next.context, outcome: null, now: 0, entropy: '' }, said).toEqual({ ...before.context, outcome: null, now: 0, entropy: '' });
        }),
      ),
      { numRuns: 60 },
    );
  });

  it('the lease moves only by its own verbs, with tokens that never go down', () => {
    const LEASE_VERBS = new Set([
      'LEASE_ACQUIRE',
      'LEASE_RELEASE',
      'LEASE_BREAK',
      'HANDOFF_ACCEPTED',
      'RETURN_ACCEPTED',
      'ACCEPT_UNDONE',
      'IMPORT_TAKEOVER',
      'REMOTE_LEASE',
    ]);
    fc.assert(
      fc.property(historyArb, (history) =>
        walk(history, ({ body, before, after: kept }) => {
          const was = before.context.lease;
          const is = kept.context.lease;
          expect(is.last_token).toBeGreaterThanOrEqual(was.last_token);
          if (is.holder?.token !== was.holder?.token) expect(LEASE_VERBS.has(body.type), `${body.type} moved the lease`).toBe(true);
          if (is.holder !== null && is.holder.token !== was.holder?.token && body.type !== 'REMOTE_LEASE')
            expect(is.holder.token).toBeGreaterThan(was.last_token);
          if (is.holder !== null) expect(is.last_token).toBeGreaterThanOrEqual(is.holder.token);
          // HANDOFF_READY stands on a verified checkpoint and offers the lease to nobody in particular.
          if (stateOf(kept) === 'HANDOFF_READY') expect([kept.context.cycle?.checkpoint?.verified, is.offered]).toEqual([true, true]);
          if (stateOf(kept) === 'RETURN_HANDOFF_READY') expect(is.offered).toBe(true);
          if (['NORMAL', 'PREPARE', 'EVACUATE'].includes(stateOf(kept))) expect(is.offered).toBe(false);
        }),
      ),
      { numRuns: 30 },
    );
  });
});
