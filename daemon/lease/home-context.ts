import type { Clock } from '../clock.js';
import type { LeaseSync } from '../takeover/lease-sync.js';
import type { RemoteLeaseMoves } from '../takeover/remote-lease-moves.js';
import type { Workspace } from '../workspaces/workspace.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';

/** What every home is built from: the daemon's parts, and where this request's lease lives. */
export interface HomeContext {
  readonly registry: WorkspaceRegistry;
  readonly leaseSync: LeaseSync;
  readonly chain: RemoteLeaseMoves;
  /** The same moves under an accept's bound (git_timeout_seconds). */
  readonly acceptChain: RemoteLeaseMoves;
  readonly clock: Clock;
  readonly guardWhenUnverified: 'refuse' | 'last_known';
  readonly startDrain: (home: string) => void;
}

export interface Where {
  readonly context: HomeContext;
  readonly checkout: string;
  /** The workspace whose journal holds the lease. */
  readonly workspace: Workspace;
  /** The checkout took this workspace's cycle over (`handoff accept` ran there): it may return or close it. */
  readonly taken: boolean;
}
