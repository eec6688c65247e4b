import type { LeaseHome } from './lease-home.js';
import type { Where } from './home-context.js';
import { journalVerbs, notTaken } from './machine-verbs.js';

/** The checkout's own workspace, its lease in this machine's journal only: nothing taken over, nothing travels. */
export function workspaceHome(where: Where): LeaseHome {
  return {
    checkout: where.checkout,
    root: where.workspace.root,
    ...journalVerbs(where),
    returnLeg: () => Promise.resolve(notTaken(where.checkout)),
    close: () => Promise.resolve(notTaken(where.checkout)),
  };
}
