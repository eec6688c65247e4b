/**
 * The lease as it travels through the git remote: a chain of commits on `refs/handoff/lease/<cycle>`,
 * each holding one record. Moving the lease is pushing a child of the commit you read; the remote
 * takes exactly one of two racing pushes (never forced), so there is one holder everywhere.
 */
import type { RemoteLeaseRecordData } from '../schemas/remote-records.schema.js';
import { offeredAcceptWords } from './accept-command.js';
import { failure, type Envelope } from './envelope.js';
import type { Cycle, WorkspaceState } from './workspace-machine.js';

/** One record of the chain; its schema (schemas/remote-records.schema.ts) is checked on every read. */
export type RemoteLeaseRecord = Readonly<RemoteLeaseRecordData>;
export type RemoteLeaseState = RemoteLeaseRecord['state'];

export const leaseRef = (cycle: string): string => `refs/handoff/lease/${cycle}`;
export const packagesRef = (cycle: string): string => `refs/handoff/packages/${cycle}`;
export const LEASE_RECORD_FILE = 'lease.json';
/** The checkpoint branch of a leg: the only ref a receiver fetches for it, whatever a manifest says. */
export const checkpointRef = (cycle: string, leg: 'out' | 'return'): string => `refs/heads/handoff/${cycle}${leg === 'return' ? '-return' : ''}`;

export function offered(
  cycle: string,
  lastToken: number,
  holder: RemoteLeaseRecord['holder'],
  manifest: RemoteLeaseRecord['manifest'],
  at: string,
): RemoteLeaseRecord {
  return { schema_version: 1, cycle, state: 'offered', holder, last_token: lastToken, manifest, at };
}

/** A move of the chain, or why it cannot be made (the registry code the caller answers with). */
export type LeaseMove =
  | { readonly ok: true; readonly record: RemoteLeaseRecord }
  | { readonly ok: false; readonly code: 'lease_held' | 'stale_token' | 'wrong_state'; readonly reason: string };

const holderOf = (record: RemoteLeaseRecord): string => (record.holder === null ? '' : ` by '${record.holder.executor}' (token ${record.holder.token})`);
const refusedMove = (record: RemoteLeaseRecord, code: 'lease_held' | 'stale_token' | 'wrong_state' = 'lease_held'): LeaseMove => ({
  ok: false,
  code,
  reason:
    record.state === 'withdrawn'
      ? `the offer of cycle ${record.cycle} was withdrawn by its source (\`handoff cancel\` there): there is nothing to take`
      : `the lease of cycle ${record.cycle} is ${record.state}${holderOf(record)}`,
});

/**
 * Claims what is on offer: a receiver takes an offered lease (out leg), or the primary takes a returned
 * one (closing). `localLastToken`: the claiming workspace's own last token; the new one is above both,
 * so the token the chain records is the one that workspace holds (and none of its older tokens).
 */
export function claimOffer(record: RemoteLeaseRecord, executor: string, at: string, localLastToken = 0): LeaseMove {
  const next = { executor, token: Math.max(record.last_token, localLastToken) + 1 };
  if (record.state === 'offered') return { ok: true, record: { ...record, state: 'taken', holder: next, last_token: next.token, at } };
  if (record.state === 'return_offered') return { ok: true, record: { ...record, state: 'closed', holder: next, last_token: next.token, at } };
  return refusedMove(record);
}

type OfferPause = NonNullable<RemoteLeaseRecord['paused']>;

export const samePause = (a: OfferPause | null, b: OfferPause | null): boolean =>
  a === null ? b === null : b !== null && a.since === b.since && a.reason === b.reason;

/** A workspace's pause as its offer carries it: the reason without control characters, within the record's bound. */
export function offerPauseOf(paused: { readonly since: string; readonly reason: string | null } | null): OfferPause | null {
  if (paused === null) return null;
  // eslint-disable-next-line no-control-regex -- the record's schema refuses them
  return { since: paused.since, reason: paused.reason === null ? null : paused.reason.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, 500) };
}

/**
 * The source's kill switch carried by its offer on the remote (an `offered` record again, the same
 * holder and token): set while it is paused, cleared when it is unpaused. Nothing to write when the
 * record already says so; a lease no longer on offer has nothing to pause.
 */
export function pauseOffer(record: RemoteLeaseRecord, paused: OfferPause | null, at: string): LeaseMove {
  if (record.state !== 'offered') return refusedMove(record, 'wrong_state');
  if (samePause(record.paused ?? null, paused)) return { ok: true, record };
  return { ok: true, record: { ...record, paused, at } };
}

/** A receiver's check of an offer read from the remote: why its accept is refused (`paused_denied`), or null. */
export function offerPausedRefusal(record: RemoteLeaseRecord): string | null {
  const paused = record.paused ?? null;
  if (paused === null) return null;
  return `the source paused cycle ${record.cycle} on ${paused.since}${paused.reason === null || paused.reason === '' ? '' : ` (${paused.reason})`}: its offer cannot be accepted while it is paused`;
}

/** The source's `handoff cancel` of an out leg on offer: nobody may take it from now on. */
export function withdrawOffer(record: RemoteLeaseRecord, at: string): LeaseMove {
  // Already withdrawn (a cancel that stopped between the push and the machine): nothing more to write.
  if (record.state === 'withdrawn') return { ok: true, record };
  if (record.state !== 'offered') return refusedMove(record);
  return { ok: true, record: { ...record, state: 'withdrawn', holder: null, at } };
}

/**
 * The holder's `handoff cancel` of its return on offer: the lease is `taken` again by the same holder
 * with the same token (nobody new holds it, no token is issued), so it may close one-way or return again.
 * A primary that took the work back first (`closed`) wins: the cancel is told so (`lease_held`).
 */
export function withdrawReturn(record: RemoteLeaseRecord, token: number, at: string): LeaseMove {
  // Already withdrawn (a cancel that stopped between the push and the machine): nothing more to write.
  if (record.state === 'taken' && record.holder?.token === token) return { ok: true, record };
  if (record.state !== 'return_offered') return refusedMove(record);
  if (record.holder?.token !== token) {
    return { ok: false, code: 'stale_token', reason: `token ${token} did not offer the return of cycle ${record.cycle}${holderOf(record)}` };
  }
  return { ok: true, record: { ...record, state: 'taken', at } };
}

/**
 * A held lease let go: `broken` by an operator (any holder: the one that vanished), `released` by its
 * holder (only with the token the chain gave it). `last_token` stays, so every older token is stale.
 */
export function letGo(record: RemoteLeaseRecord, how: 'broken' | 'released', token: number | null, at: string): LeaseMove {
  if (record.state !== 'taken' || record.holder === null) return refusedMove(record, 'wrong_state');
  if (how === 'released' && record.holder.token !== token) {
    return { ok: false, code: 'stale_token', reason: `token ${token ?? 'none'} does not hold the lease of cycle ${record.cycle}${holderOf(record)}` };
  }
  return { ok: true, record: { ...record, state: how, holder: null, at } };
}

/** Someone takes a lease nobody holds (broken or released): the next token along the chain (and above the workspace's own). */
export function acquireFree(record: RemoteLeaseRecord, executor: string, at: string, localLastToken = 0): LeaseMove {
  if (record.state !== 'broken' && record.state !== 'released') return refusedMove(record);
  const token = Math.max(record.last_token, localLastToken) + 1;
  return { ok: true, record: { ...record, state: 'taken', holder: { executor, token }, last_token: token, at } };
}

/** The holder offers the work back: only with the token the chain gave it. */
export function offerReturn(record: RemoteLeaseRecord, token: number, manifest: RemoteLeaseRecord['manifest'], at: string): LeaseMove {
  if (record.state !== 'taken' || record.holder?.token !== token) {
    return {
      ok: false,
      code: 'stale_token',
      reason: `token ${token} does not hold the lease of cycle ${record.cycle} (${record.state}${record.holder ? `, holder '${record.holder.executor}'` : ''})`,
    };
  }
  return { ok: true, record: { ...record, state: 'return_offered', manifest, at } };
}

export const serializeLeaseRecord = (record: RemoteLeaseRecord): string => `${JSON.stringify(record, null, 2)}\n`;

/** While the cycle is offered, taken or handed back, its lease lives on the remote (lease-sync follows it there). */
export const TRAVELLING_STATES: ReadonlySet<WorkspaceState> = new Set(['HANDOFF_READY', 'TAKEOVER', 'RETURN_HANDOFF_READY']);

/**
 * One truth for a travelling lease: every local acquire, release or break moves the remote chain first
 * (daemon/takeover/remote-lease-moves.ts). Two places have nothing such a move could mean, and are
 * refused naming what works there: an offer (nobody holds it: a receiver accepts it, or the source
 * withdraws it with `handoff cancel`) and a return on offer (the primary accepts it back, or the
 * checkout that returned it withdraws it with `handoff cancel`).
 */
export function travellingLeaseRefusal(cycle: Cycle | null, state: WorkspaceState, verb: 'acquire' | 'release' | 'break'): Envelope | null {
  if (cycle === null || cycle.remote === null || (state !== 'HANDOFF_READY' && state !== 'RETURN_HANDOFF_READY')) return null;
  const ref = leaseRef(cycle.id);
  const works =
    state === 'HANDOFF_READY'
      ? `a receiver takes it with \`${offeredAcceptWords(cycle, 'out').command}\`; the source withdraws it with \`handoff cancel\``
      : `the primary takes the work back with \`${offeredAcceptWords(cycle, 'return').command}\` in the source checkout; the checkout that returned it withdraws the return with \`handoff cancel\``;
  return failure(
    'lease_travels',
    `the lease of cycle ${cycle.id} is on offer on the remote '${cycle.remote.name}' (${ref}, ${state}): while it is on offer a \`handoff lease ${verb}\` has nothing to move`,
    `${works}; see it with \`handoff status\` or \`git fetch ${cycle.remote.name} ${ref}\``,
    { cycle: cycle.id, remote: cycle.remote.name, ref, state },
  );
}

/** The lease of this cycle lives on the remote now: local lease verbs write through to the chain. */
export const leaseTravels = (cycle: Cycle | null, state: WorkspaceState): cycle is Cycle & { remote: NonNullable<Cycle['remote']> } =>
  cycle !== null && cycle.remote !== null && TRAVELLING_STATES.has(state);

/**
 * The receiver's accept undone (its `--checkout` failed after the chain moved): a child of the `taken`
 * record offers the lease again. `last_token` stays, so the token of the undone accept is stale
 * everywhere and the next accept gets a higher one.
 */
export function reofferTaken(record: RemoteLeaseRecord, token: number, at: string): LeaseMove {
  if (record.state !== 'taken' || record.holder?.token !== token) {
    return { ok: false, code: 'stale_token', reason: `token ${token} does not hold the lease of cycle ${record.cycle} (${record.state})` };
  }
  return { ok: true, record: { ...record, state: 'offered', holder: null, at } };
}

/**
 * The moves the chain can make, each one by one verb (a later record is a child of the one it moves).
 * Anything else read from a remote is refused, however well-formed: whoever can push there wrote it.
 */
const LEGAL_MOVES: Readonly<Record<RemoteLeaseState, readonly RemoteLeaseState[]>> = {
  // A later revision re-offers; a receiver takes it; the source withdraws it.
  offered: ['offered', 'taken', 'withdrawn'],
  // Handed back; a one-way close by the holder; broken or released; an undone accept offers it again.
  taken: ['return_offered', 'closed', 'broken', 'released', 'offered'],
  // The primary takes the work back (closed); the holder withdraws its return (taken again, same holder and token).
  return_offered: ['closed', 'taken'],
  broken: ['taken'],
  released: ['taken'],
  closed: [],
  withdrawn: [],
};

const sameHolder = (a: RemoteLeaseRecord['holder'], b: RemoteLeaseRecord['holder']) =>
  a !== null && b !== null && a.executor === b.executor && a.token === b.token;

/**
 * Whether `next` is a legal move from `previous` on one cycle's chain: a transition of the table above,
 * `last_token` never lower, a new holder only with a token above every token issued before (and it is the
 * new last one), a holder kept where the verb keeps it. Null when legal, else why not (for the sync error).
 */
export function judgeLeaseMove(previous: RemoteLeaseRecord, next: RemoteLeaseRecord): string | null {
  const move = `${previous.state} -> ${next.state}`;
  if (next.cycle !== previous.cycle) return `a record of cycle ${next.cycle} follows one of cycle ${previous.cycle}`;
  if (!LEGAL_MOVES[previous.state].includes(next.state)) return `${move} is not a move of the lease chain`;
  if (next.last_token < previous.last_token) return `${move} lowers last_token from ${previous.last_token} to ${next.last_token}`;
  // A withdrawn return gives the lease back to the holder that offered it: no new holder, no new token.
  if (previous.state === 'return_offered' && next.state === 'taken') {
    if (!sameHolder(previous.holder, next.holder)) return `${move} (a withdrawn return) is not made by the holder of token ${previous.holder?.token ?? 'none'}`;
    if (next.last_token !== previous.last_token) return `${move} (a withdrawn return) changes last_token (${previous.last_token} -> ${next.last_token})`;
    return null;
  }
  const takesIt = next.state === 'taken' || (previous.state === 'return_offered' && next.state === 'closed');
  if (takesIt) {
    if (next.holder === null) return `${move} names no holder`;
    if (next.holder.token <= previous.last_token) return `${move} gives token ${next.holder.token}, already issued (last_token was ${previous.last_token})`;
    if (next.last_token !== next.holder.token) return `${move} gives token ${next.holder.token} but records last_token ${next.last_token}`;
    return null;
  }
  if (next.last_token !== previous.last_token) return `${move} changes last_token (${previous.last_token} -> ${next.last_token}) without a new holder`;
  // Kept holder: the hand-back and the one-way close are the holder's own moves, with its token.
  if ((next.state === 'return_offered' || next.state === 'closed') && !sameHolder(previous.holder, next.holder)) {
    return `${move} is not made by the holder of token ${previous.holder?.token ?? 'none'}`;
  }
  if (['withdrawn', 'broken', 'released'].includes(next.state) && next.holder !== null) return `${move} names a holder where nobody holds`;
  if (previous.state === 'taken' && next.state === 'offered' && next.holder !== null) return `${move} (an undone accept) names a holder`;
  return null;
}

/**
 * A chain read from the remote, oldest first after the record this machine knows: every step judged.
 * Null when all are legal, else the first illegal move, named by its place.
 */
export function judgeLeaseChain(known: RemoteLeaseRecord, later: readonly RemoteLeaseRecord[]): string | null {
  let previous = known;
  for (const [index, next] of later.entries()) {
    const why = judgeLeaseMove(previous, next);
    if (why !== null) return `record ${index + 1} after the one this machine knows: ${why}`;
    previous = next;
  }
  return null;
}

/** The holder closes a one-way cycle: a `closed` record with its own token (the source follows it to CLOSED). */
export function closeOneWay(record: RemoteLeaseRecord, token: number, at: string): LeaseMove {
  if (record.state !== 'taken' || record.holder?.token !== token) {
    return {
      ok: false,
      code: 'stale_token',
      reason: `token ${token} does not hold the lease of cycle ${record.cycle} (${record.state}${record.holder ? `, holder '${record.holder.executor}' token ${record.holder.token}` : ''})`,
    };
  }
  return { ok: true, record: { ...record, state: 'closed', at } };
}
