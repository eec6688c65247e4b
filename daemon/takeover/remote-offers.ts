import { displayRemote, HandoffError, isCycleId, leaseRef } from '../../protocol/index.js';
import { dataArg, runGit } from '../git/index.js';
import { readLease } from '../evacuation/remote-records.js';

/** What `--latest --from` chooses among, and the records it passed over (named, so none is silently lost). */
export interface RemoteOffers {
  readonly ready: string[];
  readonly skipped: { readonly ref: string; readonly why: string }[];
}

/**
 * The cycles whose lease on `remote` is still offered: what `handoff accept --latest --from REMOTE`
 * chooses among in a clone that knows no cycle id (a cloud agent's fresh sandbox). Each lease is read
 * and checked as `accept CYCLE --from REMOTE` would read it. Anyone who can push names refs there: a
 * ref that is no cycle id, or a record that fails its checks, is passed over (and said), not a reason
 * to refuse every other offer. A remote that cannot be read still fails the whole listing.
 */
export async function offeredCyclesOn(work: string, remote: string, timeoutMs: number): Promise<RemoteOffers> {
  dataArg(remote, 'remote');
  const prefix = leaseRef('');
  const listed = await runGit(['ls-remote', '--refs', '--end-of-options', remote, `${prefix}*`], { cwd: work, timeoutMs });
  if (listed.code !== 0 || listed.timedOut) {
    throw new HandoffError(
      'remote_unreachable',
      `the leases on '${displayRemote(remote)}' cannot be listed: ${listed.timedOut ? 'timed out' : listed.stderr.trim()}`,
      'check the network and the remote, then retry; nothing was changed',
    );
  }
  const ready: string[] = [];
  const skipped: { ref: string; why: string }[] = [];
  for (const line of listed.stdout.split('\n')) {
    const ref = line.split('\t')[1];
    if (ref?.startsWith(prefix) !== true) continue;
    const cycle = ref.slice(prefix.length);
    if (!isCycleId(cycle)) {
      skipped.push({ ref, why: 'not a cycle id' });
      continue;
    }
    try {
      if ((await readLease(work, remote, cycle, timeoutMs)).record?.state === 'offered') ready.push(cycle);
    } catch (error) {
      if (!(error instanceof HandoffError) || error.code !== 'corrupt_record') throw error;
      skipped.push({ ref, why: error.message });
    }
  }
  return { ready, skipped };
}
