import {
  initialSnapshot,
  restoreSnapshot,
  samePolicy,
  stateOf,
  type PauseInfo,
  type WorkspaceEffect,
  type WorkspaceEvent,
  type WorkspaceSnapshot,
  type WorkspaceState,
} from '../../protocol/index.js';
import type { Config, PressurePolicy, Profile } from '../../schemas/index.js';
import type { Logger } from '../logger.js';
import { foldJournal } from './journal-fold.js';
import { Workspace, type Handled, type WorkspaceChange, type WorkspaceDeps, type WorkspaceRecord } from './workspace.js';

export interface RegistryDeps {
  readonly config: Config;
  readonly append: (record: WorkspaceRecord) => Promise<void>;
  readonly meta: () => { at: number; entropy: string };
  readonly log: Logger;
  /** Called once per workspace, after it exists: directories, watchers. */
  readonly onOpen: (root: string) => Promise<void>;
  /** Runs a transition's effect (the drain), after the change is journaled. */
  readonly effect: (effect: WorkspaceEffect, root: string) => void;
}

/** The policy every workspace holds now: the config's at start, then each live `handoff config set`'s. */
type LivePolicy = { readonly pressure: PressurePolicy; readonly profile: Profile };

/** A workspace whose stage a new policy moved (a lowered line it was already above). */
export interface PolicyMove {
  readonly workspace: string;
  readonly from: WorkspaceState;
  readonly to: WorkspaceState;
}

type EventBody = WorkspaceEvent extends infer E ? (E extends WorkspaceEvent ? Omit<E, 'at' | 'entropy'> : never) : never;

/** One workspace per git root, created on first use, restored from the journal on start. */
export class WorkspaceRegistry {
  private readonly workspaces = new Map<string, Workspace>();
  private readonly opening = new Map<string, Promise<Workspace>>();
  private globalPause: PauseInfo | null = null;
  private readonly observers = new Set<(change: WorkspaceChange) => void>();
  /** Workspaces whose readings changed since the last coalesced write. */
  private readonly unwrittenReadings = new Set<string>();
  private policy: LivePolicy;

  constructor(private readonly deps: RegistryDeps) {
    this.policy = { pressure: deps.config.pressure, profile: deps.config.profile };
  }

  /** Observes every applied change of every workspace, after it is journaled; returns the unsubscribe. */
  observe(observer: (change: WorkspaceChange) => void): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  /** Each workspace as the journal's records leave it. */
  restore(records: readonly unknown[]): void {
    for (const [root, persisted] of foldJournal(records)) {
      this.workspaces.set(root, new Workspace(root, restoreSnapshot(persisted), true, this.workspaceDeps()));
    }
  }

  /** Every workspace whole: what a compacted journal starts with. */
  snapshotRecords(): WorkspaceRecord[] {
    return this.all().map((workspace) => workspace.journaled());
  }

  /** Writes the readings that changed since the last call, one record per workspace. */
  async flushReadings(): Promise<void> {
    const roots = [...this.unwrittenReadings];
    this.unwrittenReadings.clear();
    await Promise.all(
      roots.flatMap((root) => {
        const workspace = this.workspaces.get(root);
        return workspace === undefined ? [] : [this.deps.append(workspace.telemetryRecord())];
      }),
    );
  }

  all(): Workspace[] {
    return [...this.workspaces.values()];
  }

  find(root: string): Workspace | undefined {
    return this.workspaces.get(root);
  }

  /** Bring every restored workspace in line with today's config and the PAUSE files on disk. */
  async reconcile(): Promise<void> {
    for (const workspace of this.all()) {
      await this.deps.onOpen(workspace.root);
      await this.alignConfig(workspace);
    }
  }

  async open(root: string): Promise<Workspace> {
    const existing = this.workspaces.get(root);
    if (existing) return existing;
    let pending = this.opening.get(root);
    if (!pending) {
      pending = this.create(root).finally(() => this.opening.delete(root));
      this.opening.set(root, pending);
    }
    return pending;
  }

  async dispatch(root: string, body: EventBody): Promise<Handled> {
    const workspace = await this.open(root);
    return workspace.handle({ ...body, ...this.deps.meta() } as WorkspaceEvent);
  }

  async setPause(scope: 'global' | 'workspace', root: string | null, pause: PauseInfo | null): Promise<void> {
    if (scope === 'global') {
      this.globalPause = pause;
      for (const workspace of this.all()) await this.dispatch(workspace.root, { type: 'PAUSE_SET', scope, pause });
    } else if (root !== null) {
      await this.dispatch(root, { type: 'PAUSE_SET', scope, pause });
    }
  }

  /**
   * A reloaded config's policy, through each workspace's machine (CONFIG_SET, journaled): the machine
   * decides what the new lines do to a workspace's stage. Workspaces opened later start with it.
   */
  async applyPolicy(config: Config): Promise<PolicyMove[]> {
    this.policy = { pressure: config.pressure, profile: config.profile };
    const moves: PolicyMove[] = [];
    for (const workspace of this.all()) {
      const from = stateOf(workspace.snapshot());
      const { snapshot } = await this.alignConfig(workspace);
      if (stateOf(snapshot) !== from) moves.push({ workspace: workspace.root, from, to: stateOf(snapshot) });
    }
    return moves;
  }

  isGloballyPaused(): boolean {
    return this.globalPause !== null;
  }

  private async create(root: string): Promise<Workspace> {
    const snapshot = initialSnapshot({ root, policy: this.policy.pressure, profile: this.policy.profile, at: this.deps.meta().at });
    const workspace = new Workspace(root, snapshot, false, this.workspaceDeps());
    this.workspaces.set(root, workspace);
    this.deps.log.info({ workspace: root }, 'workspace opened');
    if (this.globalPause !== null) await this.dispatch(root, { type: 'PAUSE_SET', scope: 'global', pause: this.globalPause });
    try {
      await this.deps.onOpen(root);
    } catch (error) {
      // A read-only checkout still gets status and readings; only its PAUSE file goes unwatched.
      this.deps.log.warn({ workspace: root, err: error }, 'could not prepare the workspace directory');
    }
    return workspace;
  }

  private async alignConfig(workspace: Workspace): Promise<{ snapshot: WorkspaceSnapshot }> {
    const { policy, profile } = workspace.snapshot().context;
    const { pressure, profile: wanted } = this.policy;
    if (samePolicy(policy, pressure) && profile === wanted) return { snapshot: workspace.snapshot() };
    return this.dispatch(workspace.root, { type: 'CONFIG_SET', policy: pressure, profile: wanted });
  }

  private workspaceDeps(): WorkspaceDeps {
    const log = this.deps.log.child({ module: 'workspace' });
    const changed = (change: WorkspaceChange) => {
      for (const observer of this.observers) {
        try {
          observer(change);
        } catch (error) {
          // An observer only watches: its failure must not fail a change that is already journaled.
          log.warn({ workspace: change.root, err: error }, 'a workspace observer failed');
        }
      }
    };
    const telemetry = (root: string) => void this.unwrittenReadings.add(root);
    return { append: this.deps.append, effect: this.deps.effect, log, changed, telemetry };
  }
}
