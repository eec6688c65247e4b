import type { LeaseHome } from './lease-home.js';
import type { Where } from './home-context.js';
import { heldToken, journalVerbs, send, startReturn } from './machine-verbs.js';

/**
 * The cycle this checkout took over, its lease in this machine's journal only (it went out through no
 * remote): every verb acts on that cycle's workspace, so a release, an acquire by another executor and
 * the return all fence with the one lease.
 */
export function receivingHome(where: Where): LeaseHome {
  return {
    checkout: where.checkout,
    root: where.workspace.root,
    ...journalVerbs(where),
    async returnLeg(given, wait) {
      const token = await heldToken(where, given);
      return typeof token === 'number' ? startReturn(where, token, wait) : token;
    },
    async close(given) {
      const token = await heldToken(where, given);
      return typeof token === 'number' ? send(where, { type: 'CLOSE_ONE_WAY', token }) : token;
    },
  };
}
