import { failure, outcomeEnvelope, stateOf, type Envelope } from '../../protocol/index.js';
import { outOffer } from '../takeover/remote-lease-moves.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';
import { readLeaseRecord } from './lease-record.js';
import type { Where } from './home-context.js';
import type { LeaseHome } from './lease-home.js';

/**
 * The verbs as this machine's journal carries them out, once whatever travels has moved: every home
 * ends in these, so a rule the machine applies (tokens, fences, pause) is applied the same everywhere.
 */
type Body = Parameters<WorkspaceRegistry['dispatch']>[1];

export async function send(where: Where, body: Body): Promise<Envelope> {
  const { outcome, snapshot } = await where.context.registry.dispatch(where.workspace.root, body);
  return outcomeEnvelope(outcome, snapshot);
}

/** A return or close asked where nothing was taken over: where it is run instead. */
export const notTaken = (checkout: string): Envelope =>
  failure('wrong_state', `${checkout} holds no taken-over cycle`, 'run it in the checkout where you ran `handoff accept`');

/** The token the holder returns or closes with: given, else the journal's receiver token, else lease.json's (it only mirrors the journal). */
export async function heldToken(where: Where, given: number | undefined): Promise<number | Envelope> {
  if (!where.taken) return notTaken(where.checkout);
  const cycle = where.workspace.snapshot().context.cycle;
  const record = await readLeaseRecord(where.checkout);
  const token = given ?? cycle?.receiver?.token ?? (record !== null && record.cycle === cycle?.id ? record.token : undefined);
  if (token === undefined) return failure('stale_token', 'no lease token for this cycle', 'pass --token N (printed by `handoff accept`)');
  return token;
}

export async function startReturn(where: Where, token: number, wait: boolean): Promise<Envelope> {
  const { outcome, snapshot } = await where.context.registry.dispatch(where.workspace.root, { type: 'RETURN_START', token, wait });
  if (!outcome.changed && outcome.code === 'return_started') where.context.startDrain(where.workspace.root);
  return outcomeEnvelope(outcome, snapshot);
}

/** The CANCEL the journal records, with the head of the `withdrawn` (or `taken`) record the remote took first, if any. */
export async function cancelHere(where: Where, reason: string | null, withdrawn: string | null): Promise<Envelope> {
  const answered = await send(where, { type: 'CANCEL', reason, withdrawn });
  return withdrawn === null || answered.error ? answered : { ...answered, data: { ...(answered.data ?? {}), withdrawn } };
}

/**
 * An out leg whose offer went out through a remote is withdrawn there first (a `withdrawn` record): a
 * receiver that took it before is the winner (`lease_held`), and nothing changes here. Asked in every
 * home: the publish push may have offered it before the cycle's lease travels (EVACUATE).
 */
export async function withdrawOutOffer(where: Where): Promise<{ head: string | null } | Envelope> {
  const { registry, chain, leaseSync } = where.context;
  const snapshot = where.workspace.snapshot();
  const cycle = snapshot.context.cycle;
  const state = stateOf(snapshot);
  if (cycle === null || cycle.return_drain !== null || (state !== 'EVACUATE' && state !== 'HANDOFF_READY')) return { head: null };
  // Once the publish step may have pushed, the remote is asked even when its answer never came back:
  // a cancel that cannot read it is refused (remote_unreachable), never done here alone.
  const offer = outOffer(cycle);
  if (offer === null) return { head: null };
  const moved = await chain.withdraw(where.workspace.root, offer.remote, cycle.id, offer.known, offer.manifest, snapshot.context.lease.last_token);
  if (moved.ok) return { head: moved.head };
  // Refused because a receiver won: this machine follows the remote now rather than at the next sync.
  if (moved.envelope.code === 'lease_held') await leaseSync.sync(await registry.open(where.workspace.root));
  return moved.envelope;
}

/** The accept the journal records: the out leg by a receiver checkout, or the return leg by the primary; `token`: the chain's, if it travels. */
export const acceptEvent = (leg: 'out' | 'return', executor: string, receiverRoot: string, token: number | null): Body =>
  leg === 'return' ? { type: 'RETURN_ACCEPTED', executor, token } : { type: 'HANDOFF_ACCEPTED', executor, receiver_root: receiverRoot, token };

/** The lease verbs of a home whose lease only this machine's journal holds (its own workspace, or a cycle taken over here). */
export function journalVerbs(where: Where): Pick<LeaseHome, 'acquire' | 'renew' | 'release' | 'breakLease' | 'cancel' | 'accept' | 'offerAgain'> {
  return {
    accept: (leg, executor, receiverRoot) => send(where, acceptEvent(leg, executor, receiverRoot, null)),
    // Nothing travelled: the journal's undo alone puts the lease back on offer.
    offerAgain: () => Promise.resolve({ ok: true, head: null }),
    acquire: (executor) => send(where, { type: 'LEASE_ACQUIRE', executor }),
    renew: (token) => send(where, { type: 'LEASE_RENEW', token }),
    release: (token) => send(where, { type: 'LEASE_RELEASE', token }),
    breakLease: (reason) => send(where, { type: 'LEASE_BREAK', reason }),
    async cancel(reason) {
      const offer = await withdrawOutOffer(where);
      return 'authority' in offer ? offer : cancelHere(where, reason, offer.head);
    },
  };
}
