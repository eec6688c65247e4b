import type { DrainProgress } from './drain-plan.js';
import type { Cycle, WorkspaceState } from './workspace-machine.js';

/**
 * Is a drain running, and which: the out leg's in EVACUATE, the return leg's in TAKEOVER once
 * `handoff return` started it; null anywhere else. The one answer to that question for the machine,
 * the drain runner, status, `handoff check` and the ways out. Its own file (types only from the
 * machine) so the CLI's progress and status words ask it without loading xstate.
 */
export function runningDrain(state: WorkspaceState, cycle: Cycle | null): DrainProgress | null {
  if (cycle === null) return null;
  if (state === 'EVACUATE') return cycle.drain;
  if (state === 'TAKEOVER') return cycle.return_drain;
  return null;
}
