import { displayRemote, HandoffError, isCycleId, leaseRef, LEASE_RECORD_FILE, redactCredentials } from '../../protocol/index.js';
import { dataArg, fetchObjectsOf, isObjectId, readBlobsAt, runGit } from '../git/index.js';
import { leaseRecordOf } from '../evacuation/remote-records.js';

/** What `--latest --from` chooses among, and the records it passed over (named, so none is silently lost). */
export interface RemoteOffers {
  readonly ready: string[];
  readonly skipped: { readonly ref: string; readonly why: string }[];
}

/** A lease record is a few hundred bytes; a bigger `lease.json` is junk and is not read at all. */
const MAX_RECORD_BYTES = 64 * 1024;

const unreachable = (remote: string, why: string) =>
  new HandoffError(
    'remote_unreachable',
    `the leases on '${displayRemote(remote)}' cannot be listed: ${redactCredentials(why)}`,
    'check the network and the remote, then retry; nothing was changed',
  );

/**
 * The cycles whose lease on `remote` is still offered: what `handoff accept --latest --from REMOTE`
 * chooses among in a clone that knows no cycle id (a cloud agent's fresh sandbox). Anyone who can push
 * names refs there, so the cost must not grow with them by round trips: one `ls-remote`, one fetch of
 * the objects the refs named by a cycle id point at (no ref is written here: the chosen cycle is read
 * again, into its own ref, by `accept CYCLE --from`'s path), and two local gits to read every `lease.json`. A name that is
 * no cycle id, or a record that fails its schema, is passed over (and said), never a reason to refuse
 * every other offer. A remote that cannot be read still fails the whole listing.
 */
export async function offeredCyclesOn(work: string, remote: string, timeoutMs: number): Promise<RemoteOffers> {
  dataArg(remote, 'remote');
  const prefix = leaseRef('');
  const listed = await runGit(['ls-remote', '--refs', '--end-of-options', remote, `${prefix}*`], { cwd: work, timeoutMs });
  if (listed.code !== 0 || listed.timedOut) throw unreachable(remote, listed.timedOut ? 'timed out' : listed.stderr.trim());
  const skipped: { ref: string; why: string }[] = [];
  const named: { ref: string; cycle: string; object: string }[] = [];
  for (const line of listed.stdout.split('\n')) {
    const [object = '', ref] = line.split('\t');
    if (ref?.startsWith(prefix) !== true) continue;
    const cycle = ref.slice(prefix.length);
    if (!isCycleId(cycle)) skipped.push({ ref, why: 'not a cycle id' });
    else if (!isObjectId(object)) skipped.push({ ref, why: 'the remote listed no object id for it' });
    else named.push({ ref, cycle, object });
  }
  if (named.length === 0) return { ready: [], skipped };
  const fetched = await fetchObjectsOf(work, remote, named, timeoutMs);
  if (fetched.code !== 0 || fetched.timedOut) throw unreachable(remote, fetched.timedOut ? 'the fetch of the leases timed out' : fetched.stderr.trim());
  const texts = await readBlobsAt(
    work,
    named.map((n) => n.object),
    LEASE_RECORD_FILE,
    MAX_RECORD_BYTES,
  );
  const ready: string[] = [];
  named.forEach(({ ref, cycle }, i) => {
    const text = texts[i];
    // A ref moved between the listing and the fetch has no object here: passed over, said, not guessed.
    if (text === undefined || !text.ok) return void skipped.push({ ref, why: text?.why ?? 'not read' });
    try {
      if (leaseRecordOf(text.text, cycle, remote).state === 'offered') ready.push(cycle);
    } catch (error) {
      if (!(error instanceof HandoffError) || error.code !== 'corrupt_record') throw error;
      skipped.push({ ref, why: error.message });
    }
  });
  return { ready, skipped };
}
