import { createActor, type Actor } from 'xstate';
import {
  persist,
  stateOf,
  step,
  type Outcome,
  type PersistedWorkspace,
  type WorkspaceEvent,
  type workspaceMachine,
  type WorkspaceSnapshot,
} from '../../protocol/index.js';
import type { Logger } from '../logger.js';

/** What the journal keeps for every change of a workspace: the event and the snapshot it led to. */
export interface WorkspaceRecord extends PersistedWorkspace {
  readonly kind: 'workspace';
  readonly root: string;
  readonly event: WorkspaceEvent;
}

export interface WorkspaceDeps {
  readonly machine: typeof workspaceMachine;
  readonly append: (record: WorkspaceRecord) => Promise<void>;
  readonly log: Logger;
  /** Told of every applied change, after the journal has it (the dashboard's live view); must not throw. */
  readonly changed?: (change: WorkspaceChange) => void;
}

export interface WorkspaceChange {
  readonly root: string;
  readonly event: WorkspaceEvent;
  readonly snapshot: WorkspaceSnapshot;
}

export interface Handled {
  readonly outcome: Outcome;
  readonly snapshot: WorkspaceSnapshot;
}

/**
 * One git root: its live actor, with every change journaled (fsync'd) before the actor takes it and
 * before anyone is told. Events are handled one at a time, in arrival order.
 */
export class Workspace {
  readonly root: string;
  private readonly actor: Actor<typeof workspaceMachine>;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(root: string, snapshot: WorkspaceSnapshot, private readonly deps: WorkspaceDeps) {
    this.root = root;
    const { policy, profile, now } = snapshot.context;
    // xstate wants input even when resuming; the snapshot's own context is what counts.
    this.actor = createActor(deps.machine, { snapshot, input: { root, policy, profile, at: now } });
    this.actor.start();
  }

  snapshot(): WorkspaceSnapshot {
    return this.actor.getSnapshot();
  }

  handle(event: WorkspaceEvent): Promise<Handled> {
    const run = this.queue.then(() => this.apply(event));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async apply(event: WorkspaceEvent): Promise<Handled> {
    const before = this.actor.getSnapshot();
    const { next, outcome } = step(before, event);
    if (!outcome.changed) return { outcome, snapshot: before };
    await this.deps.append({ kind: 'workspace', root: this.root, event, ...persist(next) });
    this.actor.send(event);
    const after = this.actor.getSnapshot();
    if (stateOf(before) !== stateOf(after)) {
      this.deps.log.info({ workspace: this.root, from: stateOf(before), to: stateOf(after), event: event.type }, 'state changed');
    }
    this.deps.changed?.({ root: this.root, event, snapshot: after });
    return { outcome, snapshot: after };
  }

  stop(): void {
    this.actor.stop();
  }
}
