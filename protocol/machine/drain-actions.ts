import { assertEvent } from 'xstate';
import { REVISION_STEPS } from '../drain-plan.js';
import { runningDrain } from '../running-drain.js';
import { iso } from './context.js';
import { currentStep, keptRef, withDrain } from './cycle-rules.js';
import { done } from './outcome.js';
import { update } from './update.js';

/** What a running drain reports (either leg), the out leg's verified checkpoint, and `handoff cancel` of a stage or an out leg. */
export const drainActions = {
  recordBlocked: update(({ context, event }) => {
    assertEvent(event, 'DRAIN_BLOCKED');
    // When it stopped: a stopped step's time is how long it ran, not how long ago it failed.
    const cycle = withDrain(context, (drain) => ({ ...drain, blocked_at: iso(context.now) }));
    return { cycle, blocked: event.reason, outcome: done('drain_blocked', { blocked: event.reason, step: event.step }) };
  }),
  recordDrained: update(({ context }) => ({
    cycle: withDrain(context, (drain) => ({ ...drain, drained_at: drain.drained_at ?? iso(context.now) })),
    outcome: done('ok', null, runningDrain(context.stage, context.cycle)?.drained_at === null),
  })),
  recordWaited: update(({ context, event }) => {
    assertEvent(event, 'DRAIN_WAITED');
    return {
      cycle: withDrain(context, (drain) => ({ ...drain, waited: { at: iso(context.now), why: event.why }, revision_at: iso(context.now) })),
      outcome: done('ok'),
    };
  }),
  recordStep: update(({ context, event }) => {
    assertEvent(event, 'DRAIN_STEP_DONE');
    const cycle = withDrain(context, (drain) => ({
      ...drain,
      steps: { ...drain.steps, [event.step]: event.record },
      manifests: event.step === 'package' && event.record.sha256 !== null ? [...drain.manifests, event.record.sha256] : drain.manifests,
    }));
    return { cycle, blocked: null, outcome: done('ok', { step: event.step }) };
  }),
  startRevision: update(({ context, event }) => {
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
  clearBlocked: update(({ context }) => ({
    blocked: null,
    outcome: { ...done('ok', { was_blocked: context.blocked }, context.blocked !== null), message: context.blocked === null ? 'nothing was blocked' : null },
  })),
  // Readiness is never claimed for an unverified checkpoint; the drain stops there, blocked, so status
  // says why it does not finish (it used to be refused unchanged: status kept saying "checkpointing").
  recordUnverified: update(() => {
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
  offerLease: update(({ context, event }) => {
    assertEvent(event, 'CHECKPOINT_VERIFIED');
    return {
      lease: { ...context.lease, offered: true },
      cycle: context.cycle === null ? null : { ...context.cycle, checkpoint: event.checkpoint, remote: event.remote },
      blocked: null,
      outcome: done('ok'),
    };
  }),
  // `handoff cancel` of a stage or an out leg: back to NORMAL. The holder keeps the lease; an offer is withdrawn.
  cancelCycle: update(({ context, event }) => {
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
};
