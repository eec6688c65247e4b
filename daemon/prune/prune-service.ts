import { byCodeUnits } from '../../protocol/code-unit-order.js';
import { fromError, HandoffError, stateOf, success, type Envelope } from '../../protocol/index.js';
import type { PruneBody } from '../../schemas/index.js';
import { checkedOutBranches, deleteLocalRefs, deleteRemoteRefs, localHandoffRefs, remoteHandoffRefs, type HandoffRef } from '../git/index.js';
import type { TakeoverService } from '../takeover/index.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';

export interface PruneDeps {
  readonly registry: WorkspaceRegistry;
  readonly takeover: Pick<TakeoverService, 'receiving'>;
  readonly resolveRoot: (dir: string) => Promise<string>;
  readonly remoteTimeoutMs: number;
}

/** What prune did (or, dry, would do) to one ref: gone, kept with the reason, or moved under it. */
export type RefFate = 'removed' | 'would_remove' | 'kept_checked_out' | 'kept_moved';

export interface PrunedCycle {
  readonly cycle: string;
  readonly local: readonly { readonly ref: string; readonly fate: RefFate; readonly why?: string }[];
  /** Refs of this cycle the remote held (only with a remote). */
  readonly remote: readonly { readonly ref: string; readonly fate: 'removed' | 'would_remove' }[];
}

export interface PruneResult {
  readonly repo: string;
  readonly remote: string | null;
  readonly dry_run: boolean;
  /** The cycles that are still running here (current and not CLOSED, or received): never touched. */
  readonly kept_unfinished: readonly string[];
  readonly cycles: readonly PrunedCycle[];
}

const byCycle = (refs: readonly HandoffRef[]) => {
  const groups = new Map<string, HandoffRef[]>();
  for (const ref of refs) groups.set(ref.cycle, [...(groups.get(ref.cycle) ?? []), ref]);
  return groups;
};

/**
 * `handoff prune`: the daemon knows which cycles ended, so it decides. A cycle is finished when it is
 * not the workspace's current one (the machine holds one at a time) or the current one is CLOSED, and
 * this checkout is not receiving it. Only handoff refs of valid cycle ids are named; the
 * `.session-handoff/<cycle>/` files stay, they are the record.
 */
export function createPruneService(deps: PruneDeps) {
  async function plan(root: string) {
    // Refs first, then the state: a cycle that starts in between is current by the time the state is
    // read, so its fresh refs are never taken for a finished cycle's.
    const refs = await localHandoffRefs(root);
    const checkedOut = await checkedOutBranches(root);
    const snapshot = (await deps.registry.open(root)).snapshot();
    const current = snapshot.context.cycle;
    const unfinished = new Set<string>();
    if (current !== null && stateOf(snapshot) !== 'CLOSED') unfinished.add(current.id);
    const received = deps.takeover.receiving(root);
    if (received !== null) unfinished.add(received.cycle);
    const finished = [...byCycle(refs)].filter(([cycle]) => !unfinished.has(cycle)).sort(([a], [b]) => byCodeUnits(a, b));
    return { finished, checkedOut, unfinished: [...unfinished].filter((cycle) => refs.some((ref) => ref.cycle === cycle)).sort() };
  }

  async function prune(body: PruneBody): Promise<Envelope<PruneResult>> {
    const root = await deps.resolveRoot(body.repo);
    const remoteName = body.remote ?? null;
    const { finished, checkedOut, unfinished } = await plan(root);
    const names = new Set(finished.map(([cycle]) => cycle));
    const onRemote = remoteName === null ? [] : (await remoteHandoffRefs(root, remoteName, deps.remoteTimeoutMs)).filter((ref) => names.has(ref.cycle));
    // A branch kept here because someone has it checked out is kept on the remote too.
    const remoteDoomed = onRemote.filter((ref) => !checkedOut.has(ref.ref));
    if (!body.dry_run && remoteName !== null) await deleteRemoteRefs(root, remoteName, remoteDoomed, deps.remoteTimeoutMs);
    const cycles: PrunedCycle[] = [];
    for (const [cycle, refs] of finished) {
      const doomed = refs.filter((ref) => !checkedOut.has(ref.ref));
      const outcome = body.dry_run ? { deleted: doomed, failed: [] } : await deleteLocalRefs(root, doomed);
      const removed: RefFate = body.dry_run ? 'would_remove' : 'removed';
      cycles.push({
        cycle,
        local: [
          ...outcome.deleted.map(({ ref }) => ({ ref, fate: removed })),
          ...refs.filter((ref) => checkedOut.has(ref.ref)).map(({ ref }) => ({ ref, fate: 'kept_checked_out' as const })),
          ...outcome.failed.map(({ ref, why }) => ({ ref: ref.ref, fate: 'kept_moved' as const, why })),
        ],
        remote: remoteDoomed
          .filter((ref) => ref.cycle === cycle)
          .map(({ ref }) => ({ ref, fate: body.dry_run ? ('would_remove' as const) : ('removed' as const) })),
      });
    }
    return success('ok', { repo: root, remote: remoteName, dry_run: body.dry_run, kept_unfinished: unfinished, cycles });
  }

  return {
    async prune(body: PruneBody): Promise<Envelope> {
      try {
        return await prune(body);
      } catch (error) {
        if (error instanceof HandoffError) return fromError(error);
        throw error;
      }
    },
  };
}

export type PruneService = ReturnType<typeof createPruneService>;
