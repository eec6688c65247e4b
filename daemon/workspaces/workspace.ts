import {
  createStepScope,
  deltaOf,
  movesMachine,
  persist,
  refusedReading,
  stateOf,
  step,
  type Outcome,
  type PersistedWorkspace,
  type StepScope,
  type WorkspaceDelta,
  type WorkspaceEffect,
  type WorkspaceEvent,
  type WorkspaceSnapshot,
} from '../../protocol/index.js';
import type { Reading } from '../../schemas/index.js';
import type { Logger } from '../logger.js';

/** One change of a workspace in the journal: the event and what it changed (not the whole snapshot). */
export interface WorkspaceChangeRecord extends WorkspaceDelta {
  readonly kind: 'workspace';
  readonly root: string;
  readonly event: WorkspaceEvent;
}

/** A whole workspace: the base its changes apply to (written first, and again on compaction). */
export interface WorkspaceSnapshotRecord extends PersistedWorkspace {
  readonly kind: 'snapshot';
  readonly root: string;
}

/** The live readings, written coalesced: telemetry that moved nothing is not worth an fsync each. */
export interface ReadingsRecord {
  readonly kind: 'readings';
  readonly root: string;
  readonly readings: Readonly<Record<string, Reading>>;
}

export type WorkspaceRecord = WorkspaceChangeRecord | WorkspaceSnapshotRecord | ReadingsRecord;

export interface WorkspaceDeps {
  readonly append: (record: WorkspaceRecord) => Promise<void>;
  readonly log: Logger;
  /** Runs a transition's effect, after the change is journaled; must not throw. */
  readonly effect: (effect: WorkspaceEffect, root: string) => void;
  /** Told that readings changed without a journal record: the registry writes them coalesced. */
  readonly telemetry: (root: string) => void;
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
 * One git root. Each event goes through the machine's pure transition; a change that moves the machine
 * is journaled (fsync'd) before it is applied and before anyone is told, then its effects run. A
 * change that only updates readings is applied at once and written coalesced. Events are handled one
 * at a time, in arrival order.
 */
export class Workspace {
  readonly root: string;
  private current: WorkspaceSnapshot;
  /** The newest state handed to the journal: what a compaction snapshot must hold (the live one may lag an append). */
  private latest: PersistedWorkspace;
  /** Whether the journal holds a base for this workspace's changes. */
  private based: boolean;
  private queue: Promise<unknown> = Promise.resolve();
  /** Applied changes since the daemon started: what a long poll of the status waits to move. */
  private changes = 0;
  private readonly waiting = new Set<() => void>();
  /** Every step of this workspace goes through it: made once, not per event (protocol/workspace-step.ts). */
  private readonly scope: StepScope;

  constructor(
    root: string,
    snapshot: WorkspaceSnapshot,
    based: boolean,
    private readonly deps: WorkspaceDeps,
  ) {
    this.root = root;
    this.current = snapshot;
    this.scope = createStepScope(snapshot);
    this.latest = persist(snapshot);
    this.based = based;
  }

  snapshot(): WorkspaceSnapshot {
    return this.current;
  }

  /** How many changes were applied since the daemon started. */
  get change(): number {
    return this.changes;
  }

  /** Settles once a change after `seen` is applied, or after `timeoutMs`; at once when one already was. */
  changedSince(seen: number, timeoutMs: number): Promise<void> {
    // A daemon restart counts from zero again: anything but `seen` itself is news.
    if (this.changes !== seen) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiting.add(done);
    });
  }

  /** The whole workspace as the journal must restore it, telemetry included. */
  journaled(): WorkspaceSnapshotRecord {
    return { kind: 'snapshot', root: this.root, ...this.latest };
  }

  /** The coalesced write of the live readings (the whole workspace while the journal has no base for it). */
  telemetryRecord(): WorkspaceRecord {
    if (!this.based) {
      this.based = true;
      return this.journaled();
    }
    return { kind: 'readings', root: this.root, readings: this.latest.context.readings };
  }

  /** What the machine would answer to `event` now; nothing is applied, journaled or run. */
  trial(event: WorkspaceEvent): Outcome {
    return step(this.scope, this.current, event).outcome;
  }

  handle(event: WorkspaceEvent): Promise<Handled> {
    const run = this.queue.then(() => this.apply(event));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async apply(event: WorkspaceEvent): Promise<Handled> {
    const before = this.current;
    // A reading the machine would refuse is answered without its transition: the same refusal, nothing applied.
    const refused = event.type === 'READING' ? refusedReading(before.context, event.reading, event.at) : null;
    if (refused !== null) return { outcome: refused, snapshot: before };
    const { next, outcome, effects } = step(this.scope, before, event);
    if (!outcome.changed) return { outcome, snapshot: before };
    const delta = deltaOf(persist(before), persist(next));
    const durable = movesMachine(delta, stateOf(before));
    this.latest = persist(next);
    if (durable) {
      // The first change of a new workspace is preceded by its base, in one group commit.
      const base = this.based ? null : this.deps.append({ kind: 'snapshot', root: this.root, ...persist(before) });
      const change = this.deps.append({ kind: 'workspace', root: this.root, event, ...delta });
      try {
        await Promise.all([base, change]);
      } catch (error) {
        this.latest = persist(before);
        throw error;
      }
      this.based = true;
    }
    this.current = next;
    this.changes += 1;
    for (const wake of [...this.waiting]) wake();
    if (!durable) this.deps.telemetry(this.root);
    if (stateOf(before) !== stateOf(next)) {
      this.deps.log.info({ workspace: this.root, from: stateOf(before), to: stateOf(next), event: event.type }, 'state changed');
    }
    for (const effect of effects) this.deps.effect(effect, this.root);
    this.deps.changed?.({ root: this.root, event, snapshot: next });
    return { outcome: event.type === 'READING' ? { ...outcome, data: { ...outcome.data, durable } } : outcome, snapshot: next };
  }
}
