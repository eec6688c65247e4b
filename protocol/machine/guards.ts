import { assertEvent } from 'xstate';
import { runningDrain } from '../running-drain.js';
import type { WorkspaceEvent } from '../workspace-events.js';
import type { WorkspaceContext } from './context.js';
import { closableOneWay, drainKey, offerTravels } from './cycle-rules.js';
import { assessNow, levelNow, reliefSinceRequest } from './pressure-now.js';

type GuardArgs = { readonly context: WorkspaceContext; readonly event: WorkspaceEvent };

/** A `handoff cancel` whose offer the remote chain already withdrew (its `withdrawn` record was pushed first). */
function withdrawnOnChain(event: WorkspaceEvent): boolean {
  // Stryker disable next-line ConditionalExpression: only a CANCEL carries `withdrawn`; the type test only narrows the type
  if (event.type !== 'CANCEL') return false;
  return (event.withdrawn ?? null) !== null;
}

/** The machine's named guards; the state nodes (workspace-machine.ts) say where each one decides. */
export const guards = {
  paused: ({ context }: GuardArgs) => context.paused.global !== null || context.paused.workspace !== null,
  atEvacuateLine: ({ context }: GuardArgs) => levelNow(context) === 'evacuate',
  atPrepareLine: ({ context }: GuardArgs) => levelNow(context) === 'prepare',
  canRelax: ({ context }: GuardArgs) => assessNow(context).canRelax && reliefSinceRequest(context),
  checkpointVerified: ({ event }: GuardArgs) => {
    assertEvent(event, ['CHECKPOINT_VERIFIED', 'RETURN_READY']);
    return event.checkpoint.verified;
  },
  holdsLease: ({ context, event }: GuardArgs) => {
    assertEvent(event, ['RETURN_READY', 'CLOSE_ONE_WAY', 'RETURN_START', 'ACCEPT_UNDONE']);
    return context.lease.holder?.token === event.token;
  },
  // The accept imported the cycle from a remote: this workspace only ever held it as the receiver.
  undoesImport: ({ event }: GuardArgs) => event.type === 'ACCEPT_UNDONE' && event.imported,
  // The chain offers the lease again after the accept that took it was undone (its token stays spent, so
  // an offer record read before that accept, with a lower last_token, is not this).
  remoteReoffered: ({ context, event }: GuardArgs) =>
    event.type === 'REMOTE_LEASE' && event.lease.state === 'offered' && event.lease.last_token >= context.lease.last_token,
  // A travelling cycle this workspace imported as the receiver (its drain ran elsewhere: no inspect step here).
  importedCycle: ({ context }: GuardArgs) => context.cycle !== null && context.cycle.drain.steps.inspect === undefined,
  // A runner's report about a drain that is no longer the running one (cancelled while a step ran).
  staleDrain: ({ context, event }: GuardArgs) => {
    const key = (event as { drain?: string }).drain;
    const cycle = context.cycle;
    const drain = runningDrain(context.stage, cycle);
    if (key === undefined) return false;
    // Stryker disable next-line ConditionalExpression: runningDrain has no drain without a cycle; `cycle === null` only narrows the type
    if (cycle === null) return true;
    return drain === null || key !== drainKey(cycle, drain);
  },
  remoteTaken: ({ event }: GuardArgs) => event.type === 'REMOTE_LEASE' && event.lease.state === 'taken' && event.lease.holder !== null,
  remoteReturned: ({ event }: GuardArgs) => event.type === 'REMOTE_LEASE' && event.lease.state === 'return_offered' && event.return_drain !== null,
  remoteClosed: ({ event }: GuardArgs) => event.type === 'REMOTE_LEASE' && event.lease.state === 'closed' && event.lease.holder !== null,
  remoteMoved: ({ context, event }: GuardArgs) =>
    event.type === 'REMOTE_LEASE' && event.lease.holder !== null && event.lease.holder.token !== context.lease.holder?.token,
  // A one-way cycle closes by hand; so does any cycle whose last return leg was cancelled (a return
  // that cannot be made must not keep the holder from finishing: docs/concepts.md, "Ways out").
  closable: ({ context }: GuardArgs) => context.cycle !== null && closableOneWay(context.cycle),
  // `handoff cancel` only withdraws what this daemon alone offered; a lease on offer through the remote is not.
  // A cancel whose `withdrawn` record the remote took first (daemon/lease/travelling-home.ts) is not refused: the chain withdrew it.
  // The holder's cancel of a return on offer through the remote, whose `taken` record the remote took (daemon/lease/travelling-home.ts).
  returnWithdrawn: ({ context, event }: GuardArgs) => withdrawnOnChain(event) && context.cycle?.return_drain != null,
  offerTravels: ({ context, event }: GuardArgs) => context.cycle !== null && offerTravels(context.cycle) && !withdrawnOnChain(event),
};
