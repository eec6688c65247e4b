import { byCodeUnits } from '../../protocol/code-unit-order.js';
import { fromError, HandoffError, stateOf, success, type Envelope } from '../../protocol/index.js';
import type { PruneBody } from '../../schemas/index.js';
import { checkedOutBranches, deleteLocalRefs, deleteRemoteRefs, localHandoffRefs, remoteHandoffRefs, type HandoffRef } from '../git/index.js';
import type { TakeoverService } from '../takeover/index.js';
import type { CycleLedger } from './cycle-ledger.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';

export interface PruneDeps {
  readonly registry: WorkspaceRegistry;
  readonly takeover: Pick<TakeoverService, 'receiving'>;
  readonly ledger: Pick<CycleLedger, 'owns' | 'returnTaken'>;
  readonly resolveRoot: (dir: string) => Promise<string>;
  readonly remoteTimeoutMs: number;
}

/** What prune did (or, dry, would do) to one ref: gone, or kept with the reason. */
export type RefFate = 'removed' | 'would_remove' | 'kept_checked_out' | 'kept_moved' | 'kept_not_taken_back' | 'kept_look_alike';

export interface RefOutcome {
  readonly ref: string;
  readonly fate: RefFate;
  readonly why?: string;
}

export interface PrunedCycle {
  readonly cycle: string;
  readonly local: readonly RefOutcome[];
  /** Refs of this cycle the remote held (only with a remote). */
  readonly remote: readonly RefOutcome[];
}

export interface PruneResult {
  readonly repo: string;
  readonly remote: string | null;
  readonly dry_run: boolean;
  /** The cycles that are still running here (current and not CLOSED, or received): never touched. */
  readonly kept_unfinished: readonly string[];
  /** Cycles this checkout's daemon did not start (a verify fetched them, or this checkout received them): their owner prunes them. */
  readonly kept_foreign: readonly string[];
  readonly cycles: readonly PrunedCycle[];
}

const byCycle = (refs: readonly HandoffRef[]) => {
  const groups = new Map<string, HandoffRef[]>();
  for (const ref of refs) groups.set(ref.cycle, [...(groups.get(ref.cycle) ?? []), ref]);
  return groups;
};

const isReturnBranch = (ref: string): boolean => ref.startsWith('refs/heads/handoff/') && ref.endsWith('-return');

/** Why a ref of a finished cycle stays, or null when it may go. */
type Keep = (ref: HandoffRef) => { readonly fate: RefFate; readonly why?: string } | null;

/**
 * `handoff prune`: only what this daemon's own records prove finished goes. A cycle is finished when
 * this checkout drained its out leg (the ledger's origin record: a cycle a verify fetched or this
 * checkout received is never this checkout's to delete), it is not the workspace's current one (the
 * machine holds one at a time) or the current one is CLOSED, and this checkout is not receiving it.
 * A `-return` branch goes only once this checkout took the return back. Only handoff refs of valid
 * cycle ids are named; the `.session-handoff/<cycle>/` files stay, they are the record.
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
    const finished: [string, HandoffRef[]][] = [];
    const foreign: string[] = [];
    const taken = new Set<string>();
    for (const [cycle, group] of [...byCycle(refs)].sort(([a], [b]) => byCodeUnits(a, b))) {
      if (unfinished.has(cycle)) continue;
      if (!(await deps.ledger.owns(cycle, root))) foreign.push(cycle);
      else {
        finished.push([cycle, group]);
        if (await deps.ledger.returnTaken(cycle, root)) taken.add(cycle);
      }
    }
    return { finished, foreign, taken, checkedOut, unfinished: [...unfinished].filter((cycle) => refs.some((ref) => ref.cycle === cycle)).sort() };
  }

  async function prune(body: PruneBody): Promise<Envelope<PruneResult>> {
    const root = await deps.resolveRoot(body.repo);
    const remoteName = body.remote ?? null;
    const { finished, foreign, taken, checkedOut, unfinished } = await plan(root);
    const names = new Set(finished.map(([cycle]) => cycle));
    const onRemote = remoteName === null ? [] : (await remoteHandoffRefs(root, remoteName, deps.remoteTimeoutMs)).filter((ref) => names.has(ref.cycle));
    const lookAlikes = new Map(onRemote.filter((ref) => ref.lookAlikes.length > 0).map((ref) => [ref.ref, ref.lookAlikes]));
    const keep: Keep = (ref) => {
      // A branch kept here because someone has it checked out is kept on the remote too.
      if (checkedOut.has(ref.ref)) return { fate: 'kept_checked_out' };
      if (isReturnBranch(ref.ref) && !taken.has(ref.cycle))
        return {
          fate: 'kept_not_taken_back',
          why: `the returned work was never taken back into this work tree (\`git diff HEAD ${ref.ref}\` shows it); delete it yourself once you have what you need`,
        };
      const alike = lookAlikes.get(ref.ref);
      // Kept here too while it stays on the remote, so the next prune still names it there.
      if (alike !== undefined)
        return {
          fate: 'kept_look_alike',
          why: `the remote also holds ${alike.join(', ')}, which a git push cannot tell apart from this name; its owner removes it`,
        };
      return null;
    };
    const remoteDoomed = onRemote.filter((ref) => keep(ref) === null);
    if (!body.dry_run && remoteName !== null) await deleteRemoteRefs(root, remoteName, remoteDoomed, deps.remoteTimeoutMs);
    const removed: RefFate = body.dry_run ? 'would_remove' : 'removed';
    const fateOf = (ref: HandoffRef): RefOutcome => ({ ref: ref.ref, ...(keep(ref) ?? { fate: removed }) });
    const cycles: PrunedCycle[] = [];
    for (const [cycle, refs] of finished) {
      const doomed = refs.filter((ref) => keep(ref) === null);
      const outcome = body.dry_run ? { deleted: doomed, failed: [] } : await deleteLocalRefs(root, doomed);
      cycles.push({
        cycle,
        local: [
          ...outcome.deleted.map(fateOf),
          ...refs.filter((ref) => keep(ref) !== null).map(fateOf),
          ...outcome.failed.map(({ ref, why }) => ({ ref: ref.ref, fate: 'kept_moved' as const, why })),
        ],
        remote: onRemote.filter((ref) => ref.cycle === cycle).map(fateOf),
      });
    }
    return success('ok', { repo: root, remote: remoteName, dry_run: body.dry_run, kept_unfinished: unfinished, kept_foreign: foreign, cycles });
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
