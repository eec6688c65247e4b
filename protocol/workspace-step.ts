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

/**
 * The pure step: the next snapshot and the outcome, without running any effect. The daemon journals
 * the result when `outcome.changed`, and only then lets the live actor take the event.
 */
export function step(snapshot: WorkspaceSnapshot, event: WorkspaceEvent): { next: WorkspaceSnapshot; outcome: Outcome } {
  const [next] = transition(workspaceMachine, snapshot, event);
  return { next, outcome: next.context.outcome };
}
