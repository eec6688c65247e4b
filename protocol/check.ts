import type { Code } from './codes.js';
import { runningDrain } from './running-drain.js';
import { stateOf, type WorkspaceSnapshot } from './workspace-step.js';

/**
 * `handoff check`: 1 when an evacuation stopped before it finished (blocked, paused, or interrupted
 * by a crash with nothing running it), 2 when the last cycle completed, 0 otherwise.
 */
export function checkCode(snapshot: WorkspaceSnapshot, drainRunning: boolean): Code {
  const state = stateOf(snapshot);
  if (runningDrain(state, snapshot.context.cycle) !== null) return drainRunning && snapshot.context.blocked === null ? 'check_clear' : 'resume_needed';
  if (state === 'TAKEOVER') return 'check_clear';
  if (state === 'NORMAL' || state === 'PREPARE') return 'check_clear';
  return 'cycle_completed';
}
