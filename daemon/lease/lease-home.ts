import { leaseTravels, stateOf, type Envelope } from '../../protocol/index.js';
import type { Clock } from '../clock.js';
import type { LeaseSync } from '../takeover/lease-sync.js';
import { createRemoteLeaseMoves } from '../takeover/remote-lease-moves.js';
import type { Workspace } from '../workspaces/workspace.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';
import { receivingCycle } from './receiving.js';
import { receivingHome } from './receiving-home.js';
import { travellingHome } from './travelling-home.js';
import { workspaceHome } from './workspace-home.js';
import type { HomeContext } from './home-context.js';

/**
 * Where a checkout's lease lives, and how each verb is carried out there: its own workspace
 * (workspace-home.ts), the cycle it took over on this machine or imported (receiving-home.ts), or a
 * cycle whose lease travels on a remote (travelling-home.ts). The rules are protocol/'s (lease rules,
 * the chain judge); a home only says which journal and which chain a verb moves, in which order.
 * Chosen once per request (`homes.of`), so no verb decides for itself where it acts.
 */
export interface LeaseHome {
  /** The checkout the request named. */
  readonly checkout: string;
  /** The workspace whose journal holds the lease: the checkout's own, or the cycle's it took over. */
  readonly root: string;
  acquire(executor: string): Promise<Envelope>;
  renew(token: number): Promise<Envelope>;
  release(token: number): Promise<Envelope>;
  breakLease(reason: string): Promise<Envelope>;
  /** `handoff return`: the holder hands back (its token given, or the one recorded at accept). */
  returnLeg(token: number | undefined, wait: boolean): Promise<Envelope>;
  /** `handoff close --one-way` by the holder. */
  close(token: number | undefined): Promise<Envelope>;
  /** `handoff cancel`: an offer that went out through a remote is withdrawn there first. */
  cancel(reason: string | null): Promise<Envelope>;
  /** `handoff accept` of the cycle this workspace offers (the out leg, or the return leg back to the primary), for `receiverRoot`. */
  accept(leg: 'out' | 'return', executor: string, receiverRoot: string): Promise<Envelope>;
  /** An accept undone (its `--checkout` failed): the lease is offered again where it lives; `head`: the chain's record that says so. */
  offerAgain(token: number): Promise<{ ok: true; head: string | null } | { ok: false; why: string; remote: string }>;
}

export interface LeaseHomesDeps {
  readonly registry: WorkspaceRegistry;
  readonly leaseSync: LeaseSync;
  readonly clock: Clock;
  readonly guardWhenUnverified: 'refuse' | 'last_known';
  readonly rootOf: (dir: string) => Promise<string>;
  /** Wakes the drain of a workspace (the return leg runs on the holder's side). */
  readonly startDrain: (home: string) => void;
  /** How long an accept's moves of the chain may take (git_timeout_seconds), as the rest of an accept. */
  readonly acceptTimeoutMs: number;
}

export function createLeaseHomes(deps: LeaseHomesDeps) {
  // Local lease verbs while the lease travels move the remote chain first (the one truth), then this machine.
  const context: HomeContext = {
    ...deps,
    chain: createRemoteLeaseMoves({ clock: deps.clock, timeoutMs: deps.leaseSync.timeoutMs }),
    acceptChain: createRemoteLeaseMoves({ clock: deps.clock, timeoutMs: deps.acceptTimeoutMs }),
  };

  function choose(checkout: string, workspace: Workspace, taken: boolean): LeaseHome {
    const snapshot = workspace.snapshot();
    const where = { context, checkout, workspace, taken };
    if (leaseTravels(snapshot.context.cycle, stateOf(snapshot))) return travellingHome(where);
    return taken ? receivingHome(where) : workspaceHome(where);
  }

  return {
    /**
     * `follow`: the lease is read on the remote first when it travels (another machine may have moved
     * it), as status does; the verbs that judge the chain themselves (return, close, cancel) do not.
     */
    async of(repo: string, follow: boolean): Promise<LeaseHome> {
      const checkout = await deps.rootOf(repo);
      const taken = receivingCycle(deps.registry, checkout);
      const workspace = await deps.registry.open(taken?.home ?? checkout);
      if (follow) await deps.leaseSync.sync(workspace);
      return choose(checkout, workspace, taken !== null);
    },
    /** The home of a workspace itself (the source of an accept, or the one that journaled it). */
    at: (workspace: Workspace): LeaseHome => choose(workspace.root, workspace, false),
  };
}

export type LeaseHomes = ReturnType<typeof createLeaseHomes>;
