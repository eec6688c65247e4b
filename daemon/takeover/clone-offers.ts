import { isCycleId } from '../../protocol/index.js';
import { chooseRemote, runGit } from '../git/index.js';
import { offeredCyclesOn } from './remote-offers.js';

export interface CloneOffer {
  readonly remote: string;
  readonly cycles: readonly string[];
}

/**
 * What a clone this daemon never served is offered, for the SessionStart pickup of a receiver nobody
 * handed a command (a fresh clone on another machine). A `git clone` brings the remote's
 * `handoff/<cycle>` branches along as remote-tracking refs, so the remote is asked (one bounded listing
 * of its leases, offeredCyclesOn) only when such a branch is there: a clone without one costs one local
 * git, and no session start in an unrelated repository reaches the network.
 */
export async function cloneOffers(root: string, timeoutMs: number): Promise<CloneOffer | null> {
  const remote = await chooseRemote(root);
  if (remote === null) return null;
  const prefix = `refs/remotes/${remote}/handoff/`;
  const listed = await runGit(['for-each-ref', '--format=%(refname)', '--end-of-options', prefix], { cwd: root, timeoutMs });
  if (listed.code !== 0 || listed.timedOut) return null;
  if (!listed.stdout.split('\n').some((ref) => ref.startsWith(prefix) && isCycleId(ref.slice(prefix.length)))) return null;
  const { ready } = await offeredCyclesOn(root, remote, timeoutMs);
  return ready.length === 0 ? null : { remote, cycles: ready };
}
