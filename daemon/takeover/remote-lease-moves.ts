import {
  acquireFree,
  displayRemote,
  failure,
  letGo,
  withdrawOffer,
  type Cycle,
  type DrainProgress,
  type Envelope,
  type LeaseMove,
  type RemoteLeaseRecord,
} from '../../protocol/index.js';
import type { Clock } from '../clock.js';
import { readLease, writeLease } from '../evacuation/remote-records.js';

/** The chain moved: the record now on the remote and its commit (the machine records it as the lease head). */
export interface ChainMoved {
  readonly ok: true;
  readonly record: RemoteLeaseRecord;
  readonly head: string;
  readonly remote: string;
}
export type ChainMove = ChainMoved | { readonly ok: false; readonly envelope: Envelope };

const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/**
 * Where an out leg's offer went out through a remote: the cycle's remote once it is HANDOFF_READY, or
 * the publish step's push before that (the `offered` record is on the remote from the push on, even
 * while the drain still checks it). Null when nothing was offered there.
 */
export function outOfferRemote(cycle: Cycle): string | null {
  if (cycle.remote !== null) return cycle.remote.name;
  const published = (drain: DrainProgress, step: 'publish' | 'offer') => drain.steps[step]?.summary;
  const summary = published(cycle.drain, 'offer') ?? published(cycle.drain, 'publish');
  return str(summary?.['lease_head']) === null ? null : str(summary?.['remote']);
}

/**
 * The write-through of local lease verbs while a cycle's lease travels: each moves the remote chain
 * first, by pushing a child of the record it read (never forced), so of two racing moves the remote
 * takes exactly one; only then may the caller move the local machine. A loser is told who won
 * (`lease_held`) and changes nothing; a remote that cannot be reached changes nothing either.
 */
export function createRemoteLeaseMoves(deps: { clock: Clock; timeoutMs: number }) {
  const iso = () => new Date(deps.clock.now()).toISOString();

  async function move(work: string, remote: string, cycle: string, change: (record: RemoteLeaseRecord) => LeaseMove): Promise<ChainMove> {
    const { head, record } = await readLease(work, remote, cycle, deps.timeoutMs);
    if (head === null || record === null) {
      return {
        ok: false,
        envelope: failure('wrong_state', `'${displayRemote(remote)}' holds no lease record for cycle ${cycle}`, 'see `handoff status`; nothing was changed'),
      };
    }
    const next = change(record);
    if (!next.ok) return { ok: false, envelope: failure(next.code, next.reason, 'nothing was changed; `handoff status` shows where the lease is now') };
    if (next.record === record) return { ok: true, record, head, remote };
    const written = await writeLease(work, remote, next.record, head, deps.timeoutMs);
    if (written.ok) return { ok: true, record: next.record, head: written.head, remote };
    if (!written.rejected) {
      return {
        ok: false,
        envelope: failure(
          'remote_unreachable',
          `the lease of cycle ${cycle} could not be written to '${displayRemote(remote)}': ${written.why}`,
          'check the network and the remote, then retry; nothing was changed',
        ),
      };
    }
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
    /** `handoff cancel` of an offer that went out through `remote`: nobody can take it afterwards. */
    withdraw: (work: string, remote: string, cycle: string) => move(work, remote, cycle, (record) => withdrawOffer(record, iso())),
    /** `handoff lease break` (any holder) or `release` (the holder's token) of a travelling held lease. */
    letGo: (work: string, remote: string, cycle: string, how: 'broken' | 'released', token: number | null) =>
      move(work, remote, cycle, (record) => letGo(record, how, token, iso())),
    /** `handoff lease acquire` of a travelling lease nobody holds; the token is above `localLastToken` too. */
    acquire: (work: string, remote: string, cycle: string, executor: string, localLastToken: number) =>
      move(work, remote, cycle, (record) => acquireFree(record, executor, iso(), localLastToken)),
  };
}

export type RemoteLeaseMoves = ReturnType<typeof createRemoteLeaseMoves>;
