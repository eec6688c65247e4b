import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stateOf, type WorkspaceEvent, type WorkspaceSnapshot, type WorkspaceState } from '../../../protocol/index.js';
import { historyArb, walk } from './machine-harness.js';

/**
 * Every event in every state the generated histories reach, against a small model of the rules a user
 * relies on: where each event may move the workspace, that pause stops new authority, that the lease
 * moves only by its own verbs with fresh tokens, that a wrong token changes nothing, that a cycle keeps
 * its id until it ends, and that HANDOFF_READY always stands on a verified checkpoint.
 */
type Moves = Partial<Record<WorkspaceState, readonly WorkspaceState[]>>;
const STARTS: readonly WorkspaceState[] = ['NORMAL', 'PREPARE', 'CLOSED'];
const startsCycle = (paused: boolean): Moves => (paused ? {} : { NORMAL: ['EVACUATE'], PREPARE: ['EVACUATE'], CLOSED: ['EVACUATE'] });
/** Pressure moves NORMAL and PREPARE either way (a reading, or a lifted pause, let them judge again). */
const PRESSURE: Moves = { NORMAL: ['PREPARE', 'EVACUATE'], PREPARE: ['NORMAL', 'EVACUATE'] };

/** Where an event may take the workspace from each state; a state not named stays where it is. */
function allowedMoves(type: WorkspaceEvent['type'], paused: boolean): Moves {
  switch (type) {
    case 'READING':
      // A reading after CLOSED starts over in NORMAL, and judges the pressure there unless paused.
      return paused ? { CLOSED: ['NORMAL'] } : { ...PRESSURE, CLOSED: ['NORMAL', 'PREPARE', 'EVACUATE'] };
    case 'WARNING':
    case 'NOW':
      return startsCycle(paused);
    case 'PREPARE':
      return paused ? {} : { NORMAL: ['PREPARE', 'EVACUATE'], CLOSED: ['PREPARE', 'EVACUATE'] };
    case 'PAUSE_SET':
      return paused ? PRESSURE : {};
    case 'CANCEL':
      // A way out, so allowed while paused: it ends what is under way.
      return { PREPARE: ['NORMAL'], EVACUATE: ['NORMAL'], HANDOFF_READY: ['NORMAL'], RETURN_HANDOFF_READY: ['TAKEOVER'] };
    case 'CHECKPOINT_VERIFIED':
      return { EVACUATE: ['HANDOFF_READY'] };
    case 'HANDOFF_ACCEPTED':
      return paused ? {} : { HANDOFF_READY: ['TAKEOVER'] };
    case 'RETURN_READY':
      return { TAKEOVER: ['RETURN_HANDOFF_READY'] };
    case 'RETURN_ACCEPTED':
      return paused ? {} : { RETURN_HANDOFF_READY: ['CLOSED'] };
    case 'CLOSE_ONE_WAY':
      return paused ? {} : { TAKEOVER: ['CLOSED'] };
    case 'ACCEPT_UNDONE':
      return { TAKEOVER: ['HANDOFF_READY', 'NORMAL'] };
    default:
      return {};
  }
}

/** Where an event must take the workspace (the happy path of each verb), or null where the model leaves it open. */
function requiredMove(
  body: { type: WorkspaceEvent['type'] } & Record<string, unknown>,
  from: WorkspaceState,
  snapshot: WorkspaceSnapshot,
): WorkspaceState | null {
  const paused = isPaused(snapshot);
  const travels = snapshot.context.cycle?.remote != null;
  switch (body.type) {
    case 'NOW':
      return STARTS.includes(from) && !paused ? 'EVACUATE' : null;
    case 'CHECKPOINT_VERIFIED':
      if (from !== 'EVACUATE') return null;
      return (body.checkpoint as { verified: boolean }).verified ? 'HANDOFF_READY' : 'EVACUATE';
    case 'HANDOFF_ACCEPTED':
      return from === 'HANDOFF_READY' && !paused ? 'TAKEOVER' : null;
    case 'RETURN_ACCEPTED':
      return from === 'RETURN_HANDOFF_READY' && !paused ? 'CLOSED' : null;
    case 'CANCEL':
      return from === 'PREPARE' || (from === 'HANDOFF_READY' && !travels) ? 'NORMAL' : null;
    default:
      return null;
  }
}

/** Events that name a token: only the holder's moves anything. */
const FENCED = new Set<WorkspaceEvent['type']>(['LEASE_RENEW', 'LEASE_RELEASE', 'RETURN_START', 'RETURN_READY', 'CLOSE_ONE_WAY', 'ACCEPT_UNDONE']);
/** The only events that may change who holds the lease. */
const LEASE_VERBS = new Set<WorkspaceEvent['type']>(['LEASE_ACQUIRE', 'LEASE_RELEASE', 'LEASE_BREAK', 'HANDOFF_ACCEPTED', 'RETURN_ACCEPTED', 'ACCEPT_UNDONE']);
/** Events that hand out authority or start work: refused while paused. */
const STOPPED_BY_PAUSE = new Set<WorkspaceEvent['type']>([
  'NOW',
  'LEASE_ACQUIRE',
  'HANDOFF_ACCEPTED',
  'RETURN_ACCEPTED',
  'RETURN_START',
  'CLOSE_ONE_WAY',
  'DRAIN_RESUME',
]);

const isPaused = (s: WorkspaceSnapshot) => s.context.paused.workspace !== null || s.context.paused.global !== null;
const CYCLE_STATES: readonly WorkspaceState[] = ['EVACUATE', 'HANDOFF_READY', 'TAKEOVER', 'RETURN_HANDOFF_READY'];

describe('the workspace machine against its model', () => {
  it('every event in every reachable state keeps the rules of the protocol', () => {
    fc.assert(
      fc.property(historyArb, (history) =>
        walk(history, ({ body, before, next, outcome, after }) => {
          const from = stateOf(before);
          const paused = isPaused(before);
          const to = stateOf(next);
          const said = `${body.type} in ${from}${paused ? ' (paused)' : ''} answered ${outcome.code}`;

          if (to !== from) expect(allowedMoves(body.type, paused)[from] ?? [], `${said} and moved to ${to}`).toContain(to);
          const required = requiredMove(body, from, before);
          if (required !== null) expect(to, said).toBe(required);

          // The lease: tokens never go down; a holder changes only by a lease verb, and a new one gets a fresh token.
          const was = before.context.lease;
          const is = after.context.lease;
          expect(is.last_token, said).toBeGreaterThanOrEqual(was.last_token);
          if (is.holder !== null && is.holder.token !== was.holder?.token) {
            expect(LEASE_VERBS.has(body.type) || body.type === 'CANCEL', `${said} gave the lease away`).toBe(true);
            expect(is.holder.token, said).toBeGreaterThan(was.last_token);
          }
          if (is.holder === null && was.holder !== null) expect(LEASE_VERBS.has(body.type), `${said} took the lease away`).toBe(true);
          // Accepting hands the lease to the one who accepted; an operator's break is recorded with whom it took it from.
          if (to === 'TAKEOVER' && body.type === 'HANDOFF_ACCEPTED') expect(is.holder?.executor, said).toBe(body.executor);
          if (to === 'CLOSED' && body.type === 'RETURN_ACCEPTED') expect(is.holder?.executor, said).toBe(body.executor);
          if (body.type === 'LEASE_BREAK' && was.holder !== null) {
            expect(is.holder, said).toBeNull();
            expect(is.last_break, said).toMatchObject({ reason: body.reason, executor: was.holder.executor, token: was.holder.token });
          }
          if (body.type === 'LEASE_ACQUIRE' && !paused && was.holder === null && !was.offered) expect(is.holder?.executor, said).toBe(body.executor);

          // A token that is not the holder's moves nothing.
          if (FENCED.has(body.type) && 'token' in body && was.holder?.token !== body.token) {
            expect(outcome.changed, said).toBe(false);
            if (['NORMAL', 'PREPARE', 'EVACUATE', 'HANDOFF_READY', 'CLOSED'].every((s) => s !== from) && body.type !== 'LEASE_RENEW') {
              expect(['stale_token', 'paused', 'wrong_state'], said).toContain(outcome.code);
            }
          }
          if (['LEASE_RENEW', 'LEASE_RELEASE'].includes(body.type) && !outcome.changed) expect(outcome.code, said).toBe('stale_token');

          // Pause stops new authority and new work: nothing moves, nobody new holds the lease.
          if (paused && STOPPED_BY_PAUSE.has(body.type)) {
            expect([to, outcome.changed], said).toEqual([from, false]);
            if (STARTS.includes(from) && body.type === 'NOW') expect(outcome.code, said).toBe('paused_denied');
          }

          // A cycle keeps its id from EVACUATE until it ends.
          const cycleWas = before.context.cycle;
          if (CYCLE_STATES.includes(from) && CYCLE_STATES.includes(stateOf(after))) expect(after.context.cycle?.id, said).toBe(cycleWas?.id);
          if (CYCLE_STATES.includes(stateOf(after))) expect(after.context.cycle, said).not.toBeNull();
          if (STARTS.includes(from) && stateOf(after) === 'EVACUATE') expect(after.context.cycle?.id).not.toBe(cycleWas?.id);

          // HANDOFF_READY stands on a verified checkpoint, and offers the lease to nobody in particular.
          if (stateOf(after) === 'HANDOFF_READY') {
            expect(after.context.cycle?.checkpoint?.verified, said).toBe(true);
            expect(after.context.lease.offered, said).toBe(true);
          }
        }),
      ),
      { numRuns: 200 },
    );
  });
});
