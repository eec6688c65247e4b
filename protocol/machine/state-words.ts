import { offeredAcceptWords } from '../accept-command.js';
import type { Cycle, WorkspaceState } from './context.js';

/** The accept that takes the cycle on offer in this state, with its real id (the daemon knows it). */
export const offered = (cycle: Cycle | null, leg: 'out' | 'return'): string => offeredAcceptWords(cycle ?? { id: 'CYCLE', remote: null }, leg).command;

export function nothingToCancel(stage: WorkspaceState, cycle: Cycle | null): string {
  switch (stage) {
    case 'NORMAL':
      return 'nothing to cancel: no stage or drain is under way';
    case 'TAKEOVER':
      return 'nothing to cancel: no return leg is under way; the lease holder hands back with `handoff return`';
    case 'RETURN_HANDOFF_READY':
      return `nothing to cancel: the return is ready; the primary takes the work back with \`${offered(cycle, 'return')}\``;
    case 'CLOSED':
      return 'nothing to cancel: the cycle is closed';
    default:
      return `nothing to cancel in ${stage}`;
  }
}

/** The way on from each state, named with the cycle's real id. */
export function stateHint(stage: WorkspaceState, cycle: Cycle | null): string {
  switch (stage) {
    case 'NORMAL':
      return 'nothing to hand off yet: `handoff now` starts an evacuation';
    case 'PREPARE':
      return 'refresh the capsule; `handoff now` starts an evacuation';
    case 'EVACUATE':
      return 'wait for the drain to finish, or see `handoff status` for its blocked reason; `handoff cancel` gives it up';
    case 'HANDOFF_READY':
      return `a receiver takes over with \`${offered(cycle, 'out')}\``;
    case 'TAKEOVER':
      return 'the lease holder hands back with `handoff return`';
    case 'RETURN_HANDOFF_READY':
      return `the primary takes the work back with \`${offered(cycle, 'return')}\``;
    case 'CLOSED':
      return 'the cycle is closed; the next reading or `handoff now` starts a new one';
  }
}

/**
 * Why `handoff cancel` is refused while the leg's offer travels through the git remote and the chain
 * has not withdrawn it: the return leg waits for the primary there, the out leg for a receiver.
 */
export function offerTravelsWords(cycle: Cycle): { readonly message: string; readonly hint: string } {
  if (cycle.return_drain !== null) {
    return {
      message: `the return of cycle ${cycle.id} is on offer through the git remote: the primary may be taking it back there`,
      hint: `the primary takes it back with \`${offered(cycle, 'return')}\` in the source checkout; \`handoff status\` here follows the remote`,
    };
  }
  return {
    message: `the offer of cycle ${cycle.id} went out through the git remote and is not withdrawn there: a receiver may be taking it`,
    hint: 'run `handoff cancel` again: it withdraws the offer on the remote first, unless a receiver took it already; `handoff status` follows the remote',
  };
}
