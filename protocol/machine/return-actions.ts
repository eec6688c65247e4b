import { assertEvent } from 'xstate';
import { iso } from './context.js';
import { currentStep, keptRef, returnDrain } from './cycle-rules.js';
import { done } from './outcome.js';
import { update } from './update.js';

/** The return leg: `handoff return`, its verified offer, its cancel, and the remote chain's moves of it. */
export const returnActions = {
  startReturn: update(({ context, event }) => {
    assertEvent(event, 'RETURN_START');
    const cycle = context.cycle;
    const holder = context.lease.holder;
    // Stryker disable next-line ConditionalExpression,LogicalOperator: TAKEOVER always has a cycle and holdsLease a holder; the test only narrows the type
    if (cycle === null || holder === null) return {};
    // The return leg is fenced by the token of whoever holds the lease when it starts: after the
    // lease changed hands, the new holder's `handoff return` takes the fence over (and the old token is stale).
    // Stryker disable OptionalChaining: every way into TAKEOVER names a receiver (accept, import, the chain's taken record); `?.` only narrows the type
    const receiver = { executor: holder.executor, root: cycle.receiver?.root ?? null, token: event.token };
    const refenced = cycle.receiver?.token !== event.token;
    // Stryker restore OptionalChaining
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
  offerReturn: update(({ context, event }) => {
    assertEvent(event, 'RETURN_READY');
    return {
      lease: { ...context.lease, offered: true },
      // Stryker disable next-line ConditionalExpression: a return drain runs only in a cycle; the null branch only narrows the type
      cycle: context.cycle === null ? null : { ...context.cycle, return_checkpoint: event.checkpoint },
      blocked: null,
      outcome: done('ok'),
    };
  }),
  // `handoff cancel` of a return leg: back to TAKEOVER without it; the holder keeps the lease and may return again.
  cancelReturn: update(({ context, event }) => {
    assertEvent(event, 'CANCEL');
    const cycle = context.cycle;
    // Stryker disable next-line ConditionalExpression,LogicalOperator: both ways in (TAKEOVER.returning, returnWithdrawn) have a return drain; the test only narrows the type
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
  applyRemoteReturn: update(({ context, event }) => {
    assertEvent(event, 'REMOTE_LEASE');
    const cycle = context.cycle;
    // Stryker disable next-line ConditionalExpression: TAKEOVER always has a cycle; the test only narrows the type
    if (cycle === null) return {};
    return {
      lease: { ...context.lease, offered: true },
      cycle: { ...cycle, return_drain: event.return_drain, remote: cycle.remote === null ? null : { ...cycle.remote, lease_head: event.lease_head } },
      outcome: done('ok'),
    };
  }),
  // The holder withdrew its return on the remote (or the chain moved on from there while this machine was away):
  // the return leg is abandoned here too, the lease held by the record's holder.
  followWithdrawnReturn: update(({ context, event }) => {
    assertEvent(event, 'REMOTE_LEASE');
    const holder = event.lease.holder;
    const cycle = context.cycle;
    // Stryker disable next-line ConditionalExpression,LogicalOperator: remoteTaken implies a holder and RETURN_HANDOFF_READY a cycle; the test only narrows the type
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
};
