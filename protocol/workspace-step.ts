import { createActor, initialTransition, type ActorScope, type SnapshotFrom } from 'xstate';
import type { WorkspaceEvent } from './workspace-events.js';
import { runningDrain, workspaceMachine, type Outcome, type WorkspaceContext, type WorkspaceInput, type WorkspaceState } from './workspace-machine.js';

export type WorkspaceSnapshot = SnapshotFrom<typeof workspaceMachine>;

/** What the journal keeps of a workspace: enough to resolve the snapshot again after a restart. */
export interface PersistedWorkspace {
  readonly state: WorkspaceState;
  readonly context: WorkspaceContext;
}

/** The public state: the top level of the machine (TAKEOVER's children are not part of the protocol). */
export function stateOf(snapshot: WorkspaceSnapshot): WorkspaceState {
  const value = snapshot.value;
  return (typeof value === 'string' ? value : Object.keys(value)[0]) as WorkspaceState;
}

export function initialSnapshot(input: WorkspaceInput): WorkspaceSnapshot {
  return initialTransition(workspaceMachine, input)[0];
}

/**
 * The journal keeps the public state only; TAKEOVER's child follows from the cycle (a return leg's
 * drain runs or not), so journals written before the machine had children restore the same way.
 * The context's `stage` is the state too (journals older than that field have none).
 */
export function restoreSnapshot(persisted: PersistedWorkspace): WorkspaceSnapshot {
  const { state } = persisted;
  const context: WorkspaceContext = { ...persisted.context, stage: state };
  const value = state === 'TAKEOVER' ? { TAKEOVER: runningDrain(state, context.cycle) === null ? 'held' : 'returning' } : state;
  return workspaceMachine.resolveState({ value, context });
}

export function persist(snapshot: WorkspaceSnapshot): PersistedWorkspace {
  return { state: stateOf(snapshot), context: snapshot.context };
}

/** The effects a transition asks for (the machine's only actions that are not assign()); the daemon runs them after the change is journaled. */
export type WorkspaceEffect = 'startDrain' | 'startRehearsal';

/**
 * What `step` hands xstate's `transition()` as its actor scope. `transition()` alone builds one per call
 * (an actor that computes the machine's initial snapshot, then is thrown away): ~9 % of a reading's CPU
 * (docs/performance/daemon.md). This machine spawns, invokes, sends and emits nothing, so one inert
 * scope serves every step: made once by whoever steps a workspace (the daemon's Workspace, a test's harness).
 */
export type StepScope = Omit<ActorScope<WorkspaceSnapshot, WorkspaceEvent>, 'actionExecutor'>;

export function createStepScope({ context }: WorkspaceSnapshot): StepScope {
  // Stryker disable next-line ObjectLiteral: the inert actor is never started nor read (xstate's own transition() makes it without input)
  const self = createActor(workspaceMachine, { input: { root: context.root, policy: context.policy, profile: context.profile, at: context.now } });
  return {
    self,
    id: self.id,
    sessionId: self.sessionId,
    system: self.system,
    logger: () => undefined,
    defer: () => undefined,
    emit: () => undefined,
    stopChild: () => undefined,
  };
}

/**
 * The pure step (xstate's `transition()`): the next snapshot, the outcome and the effects to run,
 * without running any. The daemon journals the result when `outcome.changed`, then runs the effects.
 */
export function step(
  scope: StepScope,
  snapshot: WorkspaceSnapshot,
  event: WorkspaceEvent,
): { next: WorkspaceSnapshot; outcome: Outcome; effects: WorkspaceEffect[] } {
  const effects: WorkspaceEffect[] = [];
  // assign() actions are folded into `next` and never reach the executor: what does are the machine's effects.
  const next = workspaceMachine.transition(snapshot, event, { ...scope, actionExecutor: (action) => void effects.push(action.type as WorkspaceEffect) });
  return { next, outcome: next.context.outcome, effects };
}
