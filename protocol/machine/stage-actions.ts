import { assign } from 'xstate';
import type { WorkspaceEvent } from '../workspace-events.js';
import { iso, type WorkspaceContext, type WorkspaceState } from './context.js';
import { done, refused } from './outcome.js';
import { nothingToCancel, offerTravelsWords, stateHint } from './state-words.js';
import { update } from './update.js';

/** Every event's time and entropy, the stage entered, and the answers that change nothing but the outcome. */
export const stageActions = {
  stamp: update(({ event }) => ({ now: event.at, entropy: event.entropy })),
  enterStage: assign<WorkspaceContext, WorkspaceEvent, { stage: WorkspaceState }, WorkspaceEvent, never>(({ context }, params) => ({
    stage: params.stage,
    stage_since: iso(context.now),
  })),
  markPrepare: update(({ context }) => ({ prepare_since: context.prepare_since ?? iso(context.now) })),
  clearPrepare: update({ prepare_since: null, prepare_requested_at: null }),
  clearCycle: update({ cycle: null, blocked: null }),
  replyPrepareEntered: update(({ context }) => ({ prepare_requested_at: iso(context.now), outcome: done('prepare_entered') })),
  replyAlreadyPrepare: update({ outcome: done('prepare_entered', null, false) }),
  replyAlreadyEvacuating: update({ outcome: done('evacuation_started', null, false) }),
  replyPaused: update(({ context }) => {
    // Stryker disable next-line ObjectLiteral,StringLiteral: the guard 'paused' let this through, so a pause is set; the fallback only narrows the type
    const { path, reason } = context.paused.workspace ?? context.paused.global ?? { path: 'the kill switch', reason: null };
    return {
      outcome: refused('paused_denied', `paused by ${path}${reason ? ` (${reason})` : ''}`, 'run `handoff unpause` (or remove the PAUSE file) first'),
    };
  }),
  replyWrongState: update(({ context, event }) => ({
    outcome: refused('wrong_state', `${event.type.toLowerCase()} is not possible in ${context.stage}`, stateHint(context.stage, context.cycle)),
  })),
  replyNothingToCancel: update(({ context }) => ({
    outcome: refused('wrong_state', nothingToCancel(context.stage, context.cycle), stateHint(context.stage, context.cycle)),
  })),
  replyOfferTravels: update(({ context }) => {
    // Stryker disable next-line ConditionalExpression: the guard 'offerTravels' let this through, so a cycle is set; the test only narrows the type
    if (context.cycle === null) return {};
    const { message, hint } = offerTravelsWords(context.cycle);
    return { outcome: refused('wrong_state', message, hint) };
  }),
  replyAlreadyCurrent: update({ outcome: done('ok', null, false) }),
  replyStaleToken: update(({ context }) => ({
    outcome: refused(
      'stale_token',
      'the token is not the current lease token',
      context.lease.holder === null ? 'nobody holds the lease' : `the lease is held by '${context.lease.holder.executor}'`,
    ),
  })),
  replyClosed: update({ outcome: done('ok') }),
  replyStaleDrain: update({
    outcome: refused(
      'wrong_state',
      'this report is about a drain that was cancelled; nothing changed',
      'the step it ran is kept on disk; `handoff status` shows the drain that is running now',
    ),
  }),
  // The drain is an effect: `step()` hands it to the daemon, which runs it once the change is journaled.
  startDrain: () => undefined,
  // So is PREPARE's rehearsal of the evacuation (daemon/rehearsal/).
  startRehearsal: () => undefined,
};
