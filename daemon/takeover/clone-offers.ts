import { stat } from 'node:fs/promises';
import { isCycleId } from '../../protocol/index.js';
import { cycleDir } from '../evacuation/package-writer.js';
import { chooseRemote, runGit } from '../git/index.js';
import { isErrno } from '../store/errno.js';
import { offeredCyclesOn } from './remote-offers.js';

export interface CloneOffer {
  readonly remote: string;
  readonly cycles: readonly string[];
}

/**
 * What a clone this daemon never served is offered, for the SessionStart pickup of a receiver nobody
 * handed a command (a fresh clone on another machine). A `git clone` brings the remote's
 * `handoff/<cycle>` branches along as remote-tracking refs, so the remote is asked (one bounded listing
 * of its leases, offeredCyclesOn) only when such a branch is there for a cycle this checkout has no
 * package of (the source of a cycle, and a receiver that took one, keep it in `.session-handoff/<cycle>`):
 * a clone without one costs two local gits, and no session start in an unrelated repository, nor in the
 * primary's own after its cycle, reaches the network.
 */
export async function cloneOffers(root: string, timeoutMs: number): Promise<CloneOffer | null> {
  const remote = await chooseRemote(root);
  if (remote === null) return null;
  const prefix = `refs/remotes/${remote}/handoff/`;
  const listed = await runGit(['for-each-ref', '--format=%(refname)', '--end-of-options', prefix], { cwd: root, timeoutMs });
  if (listed.code !== 0 || listed.timedOut) return null;
  const named = listed.stdout
    .split('\n')
    .filter((ref) => ref.startsWith(prefix))
    .map((ref) => ref.slice(prefix.length))
    .filter(isCycleId);
  const unknown = (await Promise.all(named.map(async (cycle) => ((await hasPackage(root, cycle)) ? null : cycle)))).filter((c) => c !== null);
  if (unknown.length === 0) return null;
  const { ready } = await offeredCyclesOn(root, remote, timeoutMs);
  const cycles = ready.filter((cycle) => !named.includes(cycle) || unknown.includes(cycle));
  return cycles.length === 0 ? null : { remote, cycles };
}

async function hasPackage(root: string, cycle: string): Promise<boolean> {
  try {
    await stat(cycleDir(root, cycle));
    return true;
  } catch (error) {
    if (isErrno(error, 'ENOENT', 'ENOTDIR')) return false;
    throw error;
  }
}
