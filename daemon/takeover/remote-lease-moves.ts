import {
  acquireFree,
  claimOffer,
  clipChars,
  closeOneWay,
  displayRemote,
  failure,
  HandoffError,
  judgeLeaseChain,
  leaseRef,
  letGo,
  pauseOffer,
  printable,
  reofferTaken,
  withdrawOffer,
  withdrawReturn,
  type Cycle,
  type Envelope,
  type LeaseMove,
  type RemoteLeaseRecord,
} from '../../protocol/index.js';
import type { Clock } from '../clock.js';
import { leaseChainSince, readLease, writeLease } from '../evacuation/remote-records.js';

/** The chain moved: the record now on the remote and its commit (the machine records it as the lease head). */
export interface ChainMoved {
  readonly ok: true;
  readonly record: RemoteLeaseRecord;
  readonly head: string;
  readonly remote: string;
}
export type ChainMove = ChainMoved | { readonly ok: false; readonly envelope: Envelope };

const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** What `handoff cancel` must withdraw on the remote: where, the head this machine knows, the offer's manifest. */
export interface OutOffer {
  readonly remote: string;
  readonly known: string | null;
  readonly manifest: RemoteLeaseRecord['manifest'] | null;
}

/**
 * Where an out leg's offer went out through a remote: the cycle's remote once it is HANDOFF_READY; the
 * publish step's push before that (the `offered` record is on the remote from the push on, even while
 * the drain still checks it); and, once the package step chose a remote, the publish push that may have
 * reached it without its answer coming back (a timeout, a hook that hangs). Null when nothing can have been offered.
 */
export function outOffer(cycle: Cycle): OutOffer | null {
  const { steps } = cycle.drain;
  const packaged = steps.package;
  const sha256 = str(packaged?.sha256);
  const path = str(packaged?.summary['manifest']);
  const manifest = sha256 !== null && path !== null ? { path, sha256 } : null;
  const saved = str((steps.offer ?? steps.publish)?.summary['lease_head']);
  if (cycle.remote !== null) return { remote: cycle.remote.name, known: cycle.remote.lease_head ?? saved, manifest };
  const remote =
    str((steps.offer ?? steps.publish)?.summary['remote']) ?? (packaged?.summary['mechanism'] === 'handoff_branch' ? str(packaged.summary['remote']) : null);
  return remote === null ? null : { remote, known: saved, manifest };
}

/**
 * The write-through of local lease verbs while a cycle's lease travels: each moves the remote chain
 * first, by pushing a child of the record it read (never forced), so of two racing moves the remote
 * takes exactly one; only then may the caller move the local machine. A loser is told who won
 * (`lease_held`) and changes nothing; a remote that cannot be reached changes nothing either.
 */
export function createRemoteLeaseMoves(deps: { clock: Clock; timeoutMs: number }) {
  const iso = () => new Date(deps.clock.now()).toISOString();

  /**
   * `known`: the chain's head this machine follows (null: it never saw the chain). The records since are
   * judged (daemon/evacuation/remote-records.ts, protocol judgeLeaseChain) before any of them is moved on;
   * a chain refused as corrupt is moved only by `overCorrupt` (the source's withdrawal), never otherwise.
   */
  async function move(
    work: string,
    remote: string,
    cycle: string,
    known: string | null,
    change: (record: RemoteLeaseRecord) => LeaseMove,
    overCorrupt?: (record: RemoteLeaseRecord) => RemoteLeaseRecord,
  ): Promise<ChainMove> {
    const { head, record } = await readLease(work, remote, cycle, deps.timeoutMs);
    if (head === null || record === null) {
      return {
        ok: false,
        envelope: failure('wrong_state', `'${displayRemote(remote)}' holds no lease record for cycle ${cycle}`, 'see `handoff status`; nothing was changed'),
      };
    }
    const corrupt = await chainRefusal(work, remote, cycle, known, head);
    let next: LeaseMove;
    if (corrupt === null) next = change(record);
    else if (overCorrupt !== undefined) next = { ok: true, record: overCorrupt(record) };
    else return { ok: false, envelope: corrupt };
    if (!next.ok) return { ok: false, envelope: failure(next.code, next.reason, 'nothing was changed; `handoff status` shows where the lease is now') };
    if (next.record === record) return { ok: true, record, head, remote };
    const written = await writeLease(work, remote, next.record, head, deps.timeoutMs);
    if (written.ok) return { ok: true, record: next.record, head: written.head, remote };
    if (!written.rejected) return { ok: false, envelope: unwrittenLease(remote, cycle, written) };
    // The remote took another machine's move first: say whose, from the record that won.
    const winner = await readLease(work, remote, cycle, deps.timeoutMs).then(
      (read) => read.record,
      () => null,
    );
    const who =
      winner === null ? '' : `: it is ${winner.state}${winner.holder === null ? '' : ` by '${winner.holder.executor}' (token ${winner.holder.token})`}`;
    return {
      ok: false,
      envelope: failure(
        'lease_held',
        `the lease of cycle ${cycle} moved on '${displayRemote(remote)}' first${who}`,
        'nothing was changed here; `handoff status` follows the remote',
        { cycle, remote, state: winner?.state ?? null, holder: winner?.holder ?? null },
      ),
    };
  }

  return {
    /**
     * `handoff cancel` of an offer that went out through `remote`: nobody can take it afterwards. `known`
     * null and no record there yet (the publish push may still land): a `withdrawn` root record is
     * created, which that push then cannot fast-forward. A chain refused as corrupt is withdrawn over its
     * head too (docs/concepts.md, "Ways out": an honest receiver takes only an `offered` head).
     */
    withdraw: async (work: string, remote: string, cycle: string, known: string | null, manifest: RemoteLeaseRecord['manifest'] | null, lastToken: number) => {
      const at = iso();
      if (known === null && manifest !== null) {
        const { head } = await readLease(work, remote, cycle, deps.timeoutMs);
        if (head === null) return createWithdrawn(work, remote, cycle, manifest, lastToken, at);
      }
      return move(
        work,
        remote,
        cycle,
        known,
        (record) => withdrawOffer(record, at),
        (record) => ({ ...record, state: 'withdrawn', holder: null, at }),
      );
    },
    /**
     * `handoff cancel` of a return on offer through `remote`, by the holder that offered it (`token`): the
     * lease is `taken` again by it. A primary that took the work back first wins (`lease_held`, naming it).
     */
    withdrawReturn: (work: string, remote: string, cycle: string, known: string | null, token: number) =>
      move(work, remote, cycle, known, (record) => withdrawReturn(record, token, iso())),
    /** `handoff lease break` (any holder) or `release` (the holder's token) of a travelling held lease. */
    letGo: (work: string, remote: string, cycle: string, known: string | null, how: 'broken' | 'released', token: number | null) =>
      move(work, remote, cycle, known, (record) => letGo(record, how, token, iso())),
    /** `handoff lease acquire` of a travelling lease nobody holds; the token is above `localLastToken` too. */
    acquire: (work: string, remote: string, cycle: string, known: string | null, executor: string, localLastToken: number) =>
      move(work, remote, cycle, known, (record) => acquireFree(record, executor, iso(), localLastToken)),
    /** Writes nothing: whether `token` holds the lease on the remote now (a legal chain), before `handoff return` starts a leg. */
    holds: (work: string, remote: string, cycle: string, known: string | null, token: number) =>
      move(work, remote, cycle, known, (record): LeaseMove =>
        record.state === 'taken' && record.holder?.token === token
          ? { ok: true, record }
          : {
              ok: false,
              code: 'stale_token',
              reason: `token ${token} does not hold the lease of cycle ${cycle} on '${displayRemote(remote)}' (${record.state}${record.holder ? `, holder '${record.holder.executor}' token ${record.holder.token}` : ''})`,
            },
      ),
    /** The source's pause carried by its offer (null: lifted), so other machines' accepts are refused. */
    pause: (work: string, remote: string, cycle: string, known: string | null, paused: (RemoteLeaseRecord['paused'] & object) | null) =>
      move(work, remote, cycle, known, (record) => pauseOffer(record, paused, iso())),
    /** `handoff close --one-way` of a travelling lease: the holder writes `closed` with its token, so the source follows. */
    close: (work: string, remote: string, cycle: string, known: string | null, token: number) =>
      move(work, remote, cycle, known, (record) => closeOneWay(record, token, iso())),
    claim,
    reoffer,
  };

  /** `handoff accept` of this machine's cycle on offer through `remote`: the chain is claimed before anything changes here. */
  async function claim(work: string, remote: string, cycle: string, known: string | null, executor: string): Promise<ChainMove> {
    const { head, record } = await readLease(work, remote, cycle, deps.timeoutMs);
    if (record === null || head === null)
      return { ok: false, envelope: failure('wrong_state', `the remote has no lease for cycle ${cycle}`, 'the source has not offered it yet') };
    // What this machine follows is judged first: a forged or rewritten chain is claimed from by nobody.
    const refused = await chainRefusal(work, remote, cycle, known, head);
    if (refused !== null) return { ok: false, envelope: refused };
    const next = claimOffer(record, executor, iso());
    if (!next.ok) return { ok: false, envelope: failure('lease_held', next.reason, 'only one executor holds the lease') };
    const written = await writeLease(work, remote, next.record, head, deps.timeoutMs);
    if (written.ok) return { ok: true, record: next.record, head: written.head, remote };
    if (!written.rejected) return { ok: false, envelope: unwrittenLease(remote, cycle, written) };
    return { ok: false, envelope: await tookFirst(work, remote, cycle, deps.timeoutMs, 'only one executor holds the lease; see `handoff status`') };
  }

  /** The chain's `offered` record after an undone accept, pushed as a child of the `taken` one (never forced). */
  async function reoffer(work: string, remote: string, cycle: string, token: number): Promise<{ ok: true; head: string } | { ok: false; why: string }> {
    try {
      const { head, record } = await readLease(work, remote, cycle, deps.timeoutMs);
      if (record === null) return { ok: false, why: 'the remote has no lease record for it' };
      const next = reofferTaken(record, token, iso());
      if (!next.ok) return { ok: false, why: next.reason };
      const written = await writeLease(work, remote, next.record, head, deps.timeoutMs);
      if (written.ok) return { ok: true, head: written.head };
      // A rejection's last line of git is its porcelain summary ("Done"): say what happened instead.
      return { ok: false, why: written.rejected || written.outcome === 'refused' ? 'the remote rejected the push' : written.why };
    } catch (error) {
      // readLease names an unreachable remote or an unreadable record: either way the chain did not move.
      return { ok: false, why: (error as Error).message };
    }
  }

  /** A `withdrawn` record with no parent: created only where the remote has none (any other head refuses it). */
  async function createWithdrawn(
    work: string,
    remote: string,
    cycle: string,
    manifest: RemoteLeaseRecord['manifest'],
    lastToken: number,
    at: string,
  ): Promise<ChainMove | { readonly ok: true; readonly head: null }> {
    const record: RemoteLeaseRecord = { schema_version: 1, cycle, state: 'withdrawn', holder: null, last_token: lastToken, manifest, at };
    const written = await writeLease(work, remote, record, null, deps.timeoutMs);
    if (written.ok) return { ok: true, record, head: written.head, remote };
    // The publish push landed meanwhile: withdraw what it offered, as a child of it.
    if (written.rejected) return move(work, remote, cycle, null, (current) => withdrawOffer(current, at));
    // The remote holds no record and its own policy declines lease records (a drain blocked for good by a
    // hook): the publish push, which carries the offer with the checkpoint (all or nothing), is declined by
    // the same policy, so nothing can be taken there and the cancel ends here (head null: nothing written).
    if (written.outcome === 'refused') return { ok: true, head: null };
    return {
      ok: false,
      envelope: failure(
        'remote_unreachable',
        `the offer of cycle ${cycle} may have reached '${displayRemote(remote)}' and could not be withdrawn there: ${written.why}`,
        'nothing was changed here; retry `handoff cancel` when the remote answers (a receiver could take the offer until then)',
      ),
    };
  }
}

/** An accept whose claim lost the race: who holds the lease now, read from the record that won. */
export async function tookFirst(work: string, remote: string, cycle: string, timeoutMs: number, hint: string): Promise<Envelope> {
  const winner = await readLease(work, remote, cycle, timeoutMs);
  return failure(
    'lease_held',
    `another executor took cycle ${cycle} first${winner.record?.holder ? `: '${winner.record.holder.executor}' (token ${winner.record.holder.token})` : ''}`,
    hint,
  );
}

/** Null when the chain from `known` to `head` is legal (or nothing is known), else the refusal to answer with. */
export async function chainRefusal(work: string, remote: string, cycle: string, known: string | null, head: string): Promise<Envelope | null> {
  if (known === null || known === head) return null;
  try {
    const chain = await leaseChainSince(work, remote, cycle, known, head);
    const why = judgeLeaseChain(
      chain.known,
      chain.later.map((step) => step.record),
    );
    return why === null ? null : refusedChain(cycle, remote, known, why);
  } catch (error) {
    if (error instanceof HandoffError && error.code === 'corrupt_record') return refusedChain(cycle, remote, known, error.message);
    throw error;
  }
}

/**
 * A write-through that did not land and lost no race: the remote's policy declined it (remote_refused, its
 * reason), it is unreachable and still holds the old record (nothing changed), or the outcome is unknown
 * (the push's answer was lost and the ref could not be read back: `handoff status` reads it again).
 */
export function unwrittenLease(remote: string, cycle: string, written: { why: string; outcome?: 'refused' | 'unknown' }): Envelope {
  if (written.outcome === 'refused') {
    return failure(
      'remote_refused',
      `'${displayRemote(remote)}' declined the lease record of cycle ${cycle}: ${written.why}`,
      'its owner must allow pushes to refs/handoff/* (the lease travels there), then retry; nothing was changed',
    );
  }
  return failure(
    'remote_unreachable',
    `the lease of cycle ${cycle} could not be written to '${displayRemote(remote)}': ${written.why}`,
    written.outcome === 'unknown'
      ? 'the outcome is unknown: run `handoff status` (it reads the remote and follows what is there) before retrying'
      : 'check the network and the remote, then retry; nothing was changed',
  );
}

/** A chain this machine refuses to follow: what is wrong, where, and the ways out. */
export function refusedChain(cycle: string, remote: string, known: string, why: string): Envelope {
  const ref = leaseRef(cycle);
  return failure(
    'corrupt_record',
    `the lease chain ${ref} on '${displayRemote(remote)}' is refused (${clipChars(printable(why), 500)}); nothing was followed, this machine keeps the record ${known}`,
    `whoever can push to that remote rewrote the chain: put a legal child of ${known} there (\`git push --force ${displayRemote(remote)} ${known}:${ref}\` restores the known record), or \`handoff cancel\` (an offer) / \`handoff lease break\` on the source`,
  );
}

export type RemoteLeaseMoves = ReturnType<typeof createRemoteLeaseMoves>;
