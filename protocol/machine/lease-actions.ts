import { assertEvent } from 'xstate';
import * as leaseRules from '../lease-rules.js';
import { iso, type Cycle, type WorkspaceContext } from './context.js';
import { done, refused } from './outcome.js';
import { stateHint } from './state-words.js';
import { update } from './update.js';

// ACCEPT_UNDONE passed holdsLease, so its token is the holder's; the chain's re-offer may find nobody holding it (after a break).
const undoneToken = (context: WorkspaceContext) => context.lease.holder?.token ?? null;

/** The lease verbs, accepts (here or imported), the remote chain's moves of the out leg, and undone accepts. */
export const leaseActions = {
  leaseAcquire: update(({ context, event }) => {
    assertEvent(event, 'LEASE_ACQUIRE');
    const decision = leaseRules.acquire(context.lease, event.executor, iso(context.now));
    // An offer is taken by the accept that verifies it: named here with the cycle's id and where it is run.
    if (!decision.ok)
      return { outcome: refused(decision.code, decision.message, context.lease.offered ? stateHint(context.stage, context.cycle) : decision.hint) };
    return { lease: decision.lease, outcome: done('lease_acquired', { token: decision.lease.last_token }) };
  }),
  leaseRenew: update(({ context, event }) => {
    assertEvent(event, 'LEASE_RENEW');
    const decision = leaseRules.renew(context.lease, event.token, iso(context.now));
    if (!decision.ok) return { outcome: refused(decision.code, decision.message, decision.hint) };
    return { lease: decision.lease, outcome: done('lease_renewed', { token: event.token }) };
  }),
  leaseRelease: update(({ context, event }) => {
    assertEvent(event, 'LEASE_RELEASE');
    const decision = leaseRules.release(context.lease, event.token);
    if (!decision.ok) return { outcome: refused(decision.code, decision.message, decision.hint) };
    return { lease: decision.lease, outcome: done('lease_released', { token: event.token }) };
  }),
  leaseBreak: update(({ context, event }) => {
    assertEvent(event, 'LEASE_BREAK');
    const lease = leaseRules.breakLease(context.lease, event.reason, iso(context.now));
    return { lease, outcome: done('lease_broken', { last_break: lease.last_break }) };
  }),
  recordLeaseHead: update(({ context, event }) => {
    assertEvent(event, 'LEASE_HEAD');
    const cycle = context.cycle;
    if (cycle === null || cycle.remote === null) return { outcome: done('ok', null, false) };
    return {
      cycle: { ...cycle, remote: { ...cycle.remote, lease_head: event.lease_head } },
      outcome: done('ok', null, cycle.remote.lease_head !== event.lease_head),
    };
  }),
  grantAccepted: update(({ context, event }) => {
    assertEvent(event, ['HANDOFF_ACCEPTED', 'RETURN_ACCEPTED']);
    const lease = leaseRules.grant(context.lease, event.executor, iso(context.now), event.token);
    const receiver = event.type === 'HANDOFF_ACCEPTED' ? { executor: event.executor, root: event.receiver_root, token: lease.last_token } : null;
    // HANDOFF_READY, the only stage that hands a receiver the lease, always holds its cycle.
    const cycle = receiver === null ? context.cycle : { ...(context.cycle as Cycle), receiver };
    return { lease, cycle, outcome: done('accepted', { token: lease.last_token }) };
  }),
  importTakeover: update(({ context, event }) => {
    assertEvent(event, 'IMPORT_TAKEOVER');
    const lease = leaseRules.grant(context.lease, event.executor, iso(context.now), event.token);
    const token = lease.last_token;
    return {
      cycle: { ...event.cycle, receiver: { executor: event.executor, root: event.receiver_root, token } },
      lease,
      blocked: null,
      outcome: done('accepted', { token }),
    };
  }),
  applyRemoteTaken: update(({ context, event }) => {
    assertEvent(event, 'REMOTE_LEASE');
    // Its guards (remoteTaken, remoteClosed) let only a record with a holder in, and each stage that takes it holds a cycle.
    const holder = event.lease.holder as NonNullable<typeof event.lease.holder>;
    const cycle = context.cycle as Cycle;
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
  // A return leg the holder had started goes with it: left on the cycle, the next accept would be restored as returning.
  undoAccept: update(({ context, event }) => {
    assertEvent(event, ['ACCEPT_UNDONE', 'REMOTE_LEASE']);
    // Only TAKEOVER undoes an accept, and it always holds its cycle.
    const cycle = context.cycle as Cycle;
    const head = event.lease_head;
    const remote = cycle.remote == null ? null : { ...cycle.remote, lease_head: head ?? cycle.remote.lease_head };
    const lastToken = Math.max(context.lease.last_token, event.type === 'REMOTE_LEASE' ? event.lease.last_token : event.token);
    return {
      lease: { holder: null, last_token: lastToken, offered: true, last_break: context.lease.last_break },
      cycle: { ...cycle, receiver: null, remote, return_drain: null },
      blocked: null,
      outcome: done('ok', { undone: undoneToken(context), state: 'HANDOFF_READY' }),
    };
  }),
  // The receiver's side of an undone import: the cycle was only ever held here; its token stays spent.
  undoImport: update(({ context, event }) => {
    assertEvent(event, ['ACCEPT_UNDONE', 'REMOTE_LEASE']);
    const lastToken = Math.max(context.lease.last_token, event.type === 'REMOTE_LEASE' ? event.lease.last_token : event.token);
    return {
      lease: { holder: null, last_token: lastToken, offered: false, last_break: context.lease.last_break },
      cycle: null,
      blocked: null,
      outcome: done('ok', { undone: undoneToken(context), state: 'NORMAL' }),
    };
  }),
};
