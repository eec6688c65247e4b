import { initialTransition, transition, type SnapshotFrom } from 'xstate';
import type { WorkspaceEvent } from './workspace-events.js';
import { workspaceMachine, type Outcome, type WorkspaceContext, type WorkspaceInput, type WorkspaceState } from './workspace-machine.js';

export type WorkspaceSnapshot = SnapshotFrom<typeof workspaceMachine>;

/** What the journal keeps of a workspace: enough to resolve the snapshot again after a restart. */
export interface PersistedWorkspace {
  readonly state: WorkspaceState;
  readonly context: WorkspaceContext;
}

export function stateOf(snapshot: WorkspaceSnapshot): WorkspaceState {
  return snapshot.value as WorkspaceState;
}

export function initialSnapshot(input: WorkspaceInput): WorkspaceSnapshot {
  return initialTransition(workspaceMachine, input)[0];
}

export function restoreSnapshot(persisted: PersistedWorkspace): WorkspaceSnapshot {
  return workspaceMachine.resolveState({ value: persisted.state, context: persisted.context });
}

export function persist(snapshot: WorkspaceSnapshot): PersistedWorkspace {
  return { state: stateOf(snapshot), context: snapshot.context };
}

/** The effects a transition asks for; the daemon runs them after the change is journaled. */
export type WorkspaceEffect = 'startDrain';

/**
 * The pure step (xstate's `transition()`): the next snapshot, the outcome and the effects to run,
 * without running any. The daemon journals the result when `outcome.changed`, then runs the effects.
 */
export function step(snapshot: WorkspaceSnapshot, event: WorkspaceEvent): { next: WorkspaceSnapshot; outcome: Outcome; effects: WorkspaceEffect[] } {
  const [next, actions] = transition(workspaceMachine, snapshot, event);
  // assign() actions are already folded into `next`; what is left are the named effects.
  const effects = actions.map((action) => action.type).filter((type): type is WorkspaceEffect => type === 'startDrain');
  return { next, outcome: next.context.outcome, effects };
}
