import {
  closableOneWay,
  failure,
  leaseTravels,
  offerTravels,
  outcomeEnvelope,
  stateOf,
  success,
  travellingLeaseRefusal,
  type Envelope,
} from '../../protocol/index.js';
import type { ChainMoved } from '../takeover/remote-lease-moves.js';
import type { LeaseHome } from './lease-home.js';
import type { Where } from './home-context.js';
import { acceptEvent, cancelHere, heldToken, send, startReturn, withdrawOutOffer } from './machine-verbs.js';

/**
 * A cycle whose lease travels on a remote (offered, taken or handed back there), from whichever checkout
 * holds it here: each verb moves the chain first, by a child of the record it read and judged (the one
 * truth, remote-lease-moves.ts), and only then this machine. A verb this machine refuses anyway (a
 * stale token, a held lease, a pause) is refused before the remote is asked, as for any lease.
 */
export function travellingHome(where: Where): LeaseHome {
  const { registry, chain, acceptChain, leaseSync, guardWhenUnverified } = where.context;
  const root = where.workspace.root;

  /** The cycle, its state and lease as the machine holds them now; `cycle` is the travelling one, else null (it moved since). */
  function now() {
    const snapshot = where.workspace.snapshot();
    const { cycle, lease, paused } = snapshot.context;
    const state = stateOf(snapshot);
    return { state, lease, cycle, travelling: leaseTravels(cycle, state) ? cycle : null, paused: paused.global !== null || paused.workspace !== null };
  }

  /** After the chain moved: the machine records the record's commit, so lease-sync does not apply it twice. */
  const followHead = async (moved: ChainMoved) => {
    await registry.dispatch(root, { type: 'LEASE_HEAD', lease_head: moved.head });
  };

  /** The journal's move after the chain's, the chain's head recorded after it. */
  async function thenHere(moved: ChainMoved, body: Parameters<typeof send>[1]): Promise<Envelope> {
    const envelope = await send(where, body);
    await followHead(moved);
    return envelope;
  }

  /**
   * The holder's `handoff cancel` of its return on offer through the remote: the chain is given back to it
   * first (a `taken` record, its token kept). Only from the checkout that took the cycle over: in the
   * primary's (one machine) there is nothing to withdraw, the machine says so.
   */
  async function withdrawReturn(): Promise<{ head: string | null } | Envelope> {
    const { state, cycle, lease } = now();
    const token = lease.holder?.token ?? cycle?.receiver?.token;
    if (!where.taken || state !== 'RETURN_HANDOFF_READY' || cycle === null || cycle.remote === null || !offerTravels(cycle) || token === undefined)
      return { head: null };
    const moved = await chain.withdrawReturn(root, cycle.remote.name, cycle.id, cycle.remote.lease_head, token);
    if (moved.ok) return { head: moved.head };
    // A primary that took the work back first wins (`lease_held`): this machine follows it to CLOSED.
    if (moved.envelope.code === 'lease_held') await leaseSync.sync(await registry.open(root));
    return moved.envelope;
  }

  return {
    checkout: where.checkout,
    root,

    async acquire(executor) {
      const { state, cycle, lease, paused, travelling } = now();
      const refused = travellingLeaseRefusal(cycle, state, 'acquire');
      if (refused !== null) return refused;
      // Held, or paused: the machine refuses it as for any lease, before anything travels.
      if (travelling === null || paused || lease.holder !== null) return send(where, { type: 'LEASE_ACQUIRE', executor });
      const moved = await chain.acquire(root, travelling.remote.name, travelling.id, travelling.remote.lease_head, executor, lease.last_token);
      if (!moved.ok) return moved.envelope;
      // The chain's record is what this machine follows, as lease-sync would: the holder and its token,
      // and the checkout that acquired it (it returns from there).
      const { outcome, snapshot } = await registry.dispatch(root, {
        type: 'REMOTE_LEASE',
        lease: moved.record,
        lease_head: moved.head,
        return_drain: null,
        receiver_root: where.checkout,
      });
      const token = moved.record.holder?.token ?? null;
      if (snapshot.context.lease.holder?.token !== token) return outcomeEnvelope(outcome, snapshot);
      return success('lease_acquired', { workspace: root, state: stateOf(snapshot), token, remote: moved.remote, changed: true, note: null });
    },

    /**
     * Asks the chain first, as status and the guard do (the home was followed when chosen): a holder
     * broken on another machine learns it here (stale_token). While the remote cannot be read (or its
     * chain is refused), `guard_when_lease_unverified: refuse` refuses the renew as it refuses edits;
     * `last_known` trusts the last known holder (docs/configuration.md).
     */
    async renew(token) {
      const { cycle, lease } = now();
      const sync = leaseSync.statusOf(root);
      const unverified = sync?.unverified_since != null && guardWhenUnverified === 'refuse';
      // A token this machine refuses anyway is refused as stale, whatever the remote says.
      if (!unverified || lease.holder?.token !== token) return send(where, { type: 'LEASE_RENEW', token });
      return failure(
        'remote_unreachable',
        `the lease of cycle ${cycle?.id ?? ''} could not be verified on '${sync?.remote ?? ''}' since ${sync?.unverified_since ?? ''}: ${sync?.error ?? 'unknown'}`,
        'nothing was renewed (guard_when_lease_unverified: refuse); `handoff status` shows the sync error, retry when the remote answers',
      );
    },

    async release(token) {
      const { state, cycle, lease, travelling } = now();
      const refused = travellingLeaseRefusal(cycle, state, 'release');
      if (refused !== null) return refused;
      // A token this machine already refuses is refused here, before the remote is asked.
      if (travelling === null || lease.holder?.token !== token) return send(where, { type: 'LEASE_RELEASE', token });
      const moved = await chain.letGo(root, travelling.remote.name, travelling.id, travelling.remote.lease_head, 'released', token);
      return moved.ok ? thenHere(moved, { type: 'LEASE_RELEASE', token }) : moved.envelope;
    },

    async breakLease(reason) {
      const { state, cycle, lease, travelling } = now();
      const refused = travellingLeaseRefusal(cycle, state, 'break');
      if (refused !== null) return refused;
      // Nobody holds it here: nothing travels to break, the machine records the operator's break.
      if (travelling === null || lease.holder === null) return send(where, { type: 'LEASE_BREAK', reason });
      const moved = await chain.letGo(root, travelling.remote.name, travelling.id, travelling.remote.lease_head, 'broken', null);
      return moved.ok ? thenHere(moved, { type: 'LEASE_BREAK', reason }) : moved.envelope;
    },

    /** Asked on the chain first: a holder broken or replaced elsewhere is refused (stale_token) before a drain starts. */
    async returnLeg(given, wait) {
      const token = await heldToken(where, given);
      if (typeof token !== 'number') return token;
      const { state, lease, travelling } = now();
      if (state === 'TAKEOVER' && travelling !== null && lease.holder?.token === token) {
        const holds = await chain.holds(root, travelling.remote.name, travelling.id, travelling.remote.lease_head, token);
        if (!holds.ok) return holds.envelope;
      }
      return startReturn(where, token, wait);
    },

    /**
     * Closes on the chain first (a `closed` record by the holder's token, judged against what the remote
     * holds now): a holder broken elsewhere is refused there, and the source follows the close.
     */
    async close(given) {
      const token = await heldToken(where, given);
      if (typeof token !== 'number') return token;
      const { lease, paused, travelling } = now();
      let moved: ChainMoved | null = null;
      let untold: string | null = null;
      // Only a close the machine would make travels (the holder's token, closable, not paused); any other is refused below, unchanged.
      if (!paused && travelling !== null && closableOneWay(travelling) && lease.holder?.token === token) {
        const close = await chain.close(root, travelling.remote.name, travelling.id, travelling.remote.lease_head, token);
        // Declined by the remote's own policy after the chain was read and judged (this token holds it there):
        // giving up a verified hold is safe, so the close goes on here and the answer says the source was not told.
        if (!close.ok && close.envelope.code === 'remote_refused') {
          untold = `${close.envelope.error?.message ?? 'the remote declined the closed record'}: the source still sees this holder; there, \`handoff lease break --reason REASON\` ends its wait`;
        } else if (!close.ok) return close.envelope;
        else moved = close;
      }
      const envelope = moved === null ? await send(where, { type: 'CLOSE_ONE_WAY', token }) : await thenHere(moved, { type: 'CLOSE_ONE_WAY', token });
      return untold === null || envelope.error ? envelope : { ...envelope, data: { ...((envelope.data as object | null) ?? {}), note: untold } };
    },

    /** The chain is claimed first (judged, a child of what this machine follows): of two racing accepts the remote takes one. */
    async accept(leg, executor, receiverRoot) {
      const { travelling } = now();
      if (travelling === null) return send(where, acceptEvent(leg, executor, receiverRoot, null));
      const moved = await acceptChain.claim(root, travelling.remote.name, travelling.id, travelling.remote.lease_head, executor);
      if (!moved.ok) return moved.envelope;
      const { outcome, snapshot } = await registry.dispatch(root, acceptEvent(leg, executor, receiverRoot, moved.record.holder?.token ?? null));
      if (outcome.code === 'accepted') await followHead(moved);
      return outcomeEnvelope(outcome, snapshot);
    },

    async offerAgain(token) {
      const { travelling } = now();
      if (travelling === null) return { ok: true, head: null };
      const offered = await acceptChain.reoffer(root, travelling.remote.name, travelling.id, token);
      return offered.ok ? offered : { ...offered, remote: travelling.remote.name };
    },

    async cancel(reason) {
      const offer = now().state === 'RETURN_HANDOFF_READY' ? await withdrawReturn() : await withdrawOutOffer(where);
      return 'authority' in offer ? offer : cancelHere(where, reason, offer.head);
    },
  };
}
