import { displayRemote, HandoffError, leaseRef } from '../../protocol/index.js';
import { dataArg, runGit } from '../git/index.js';
import { readLease } from '../evacuation/remote-records.js';

/**
 * The cycles whose lease on `remote` is still offered: what `handoff accept --latest --from REMOTE`
 * chooses among in a clone that knows no cycle id (a cloud agent's fresh sandbox). Each lease is read
 * and checked as `accept CYCLE --from REMOTE` would read it.
 */
export async function offeredCyclesOn(work: string, remote: string, timeoutMs: number): Promise<string[]> {
  dataArg(remote, 'remote');
  const prefix = leaseRef('');
  const listed = await runGit(['ls-remote', '--refs', '--end-of-options', remote, `${prefix}*`], { cwd: work, timeoutMs });
  if (listed.code !== 0 || listed.timedOut) {
    throw new HandoffError('remote_unreachable', `the leases on '${displayRemote(remote)}' cannot be listed: ${listed.timedOut ? 'timed out' : listed.stderr.trim()}`, 'check the network and the remote, then retry; nothing was changed');
  }
  const cycles = listed.stdout.split('\n').flatMap((line) => {
    const ref = line.split('\t')[1];
    return ref?.startsWith(prefix) === true ? [ref.slice(prefix.length)] : [];
  });
  const ready: string[] = [];
  for (const cycle of cycles) {
    if ((await readLease(work, remote, cycle, timeoutMs)).record?.state === 'offered') ready.push(cycle);
  }
  return ready;
}
