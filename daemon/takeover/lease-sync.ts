import { join } from 'node:path';
import { leaseRef, offerPauseOf, packagesRef, samePause, stateOf, TRAVELLING_STATES, type Cycle, type RemoteLeaseRecord } from '../../protocol/index.js';
import type { Clock } from '../clock.js';
import { leaseChainSince, previousLease, readLease, readPackages } from '../evacuation/remote-records.js';
import { chainRefusal, createRemoteLeaseMoves } from './remote-lease-moves.js';
import { cycleDir } from '../evacuation/package-writer.js';
import type { Logger } from '../logger.js';
import type { Workspace } from '../workspaces/workspace.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';
import { importedDrain } from './imported-cycle.js';
import { materialize } from './materialize.js';
import { proveTravellingPackage, readManifest } from './records.js';

/** How far back along the chain a source that missed moves looks for the `taken` record it skipped. */
const MAX_CATCH_UP = 64;

/**
 * How long the publish step's read-back (daemon/git/publish.ts: one `ls-remote` of every ref it pushed,
 * the lease among them) stands for a sync, for the long poll that sees the offer made: the offer step
 * and that poll's answer come within it (a sync there read the same ref again over the network, 0.1–1 s).
 * No longer than the shortest lease sync interval (`lease_sync_seconds` ≥ 5): an idle source learns
 * of a move made elsewhere no later than that anyway.
 */
const READ_BACK_FRESH_MS = 5_000;

/**
 * The remote and time at which the publish step of this machine's own offer read the lease head this
 * workspace knows back from the remote, if that was at most READ_BACK_FRESH_MS before `now`.
 */
function freshReadBack(snapshot: ReturnType<Workspace['snapshot']>, now: number): { remote: string; at: string } | null {
  const { cycle } = snapshot.context;
  const published = cycle?.drain?.steps.publish;
  if (stateOf(snapshot) !== 'HANDOFF_READY' || cycle?.remote == null || published === undefined) return null;
  const { remote_verified: verified, lease_head: head, remote } = published.summary;
  if (verified !== true || head !== cycle.remote.lease_head || remote !== cycle.remote.name) return null;
  const age = now - Date.parse(published.at);
  return age >= 0 && age <= READ_BACK_FRESH_MS ? { remote, at: published.at } : null;
}

/** What this machine knows of a travelling lease: when the remote last confirmed it, or since when it could not. */
export interface LeaseSyncStatus {
  readonly remote: string;
  readonly verified_at: string | null;
  readonly unverified_since: string | null;
  readonly error: string | null;
}

/**
 * Follows the lease chain on the remote for every cycle whose lease travels: a move made on another
 * machine (taken, handed back, closed, withdrawn, broken, released) becomes this machine's state; a remote that cannot be read
 * is said so, with the time since when, and nothing is assumed.
 */
export function createLeaseSync(deps: { registry: WorkspaceRegistry; clock: Clock; log: Logger; timeoutMs: number }) {
  const status = new Map<string, LeaseSyncStatus>();
  const inflight = new Map<string, Promise<void>>();
  /** The read that follows the one in flight, shared by every caller that came while it ran. */
  const following = new Map<string, Promise<void>>();
  const iso = () => new Date(deps.clock.now()).toISOString();
  const chain = createRemoteLeaseMoves({ clock: deps.clock, timeoutMs: deps.timeoutMs });

  async function syncOne(workspace: Workspace): Promise<void> {
    const snapshot = workspace.snapshot();
    const cycle = snapshot.context.cycle;
    if (cycle === null || cycle.remote === null || !TRAVELLING_STATES.has(stateOf(snapshot))) return;
    const previous = status.get(workspace.root);
    // The remote is confirmed as of when the read began: it may have moved while the read ran.
    const readAt = iso();
    try {
      const { head, record } = await readLease(workspace.root, cycle.remote.name, cycle.id, deps.timeoutMs);
      status.set(workspace.root, { remote: cycle.remote.name, verified_at: readAt, unverified_since: null, error: null });
      if (head === null || record === null) return;
      const paused = snapshot.context.paused.workspace ?? snapshot.context.paused.global;
      if (head === cycle.remote.lease_head) {
        const carried = offerPauseOf(paused);
        if (stateOf(snapshot) === 'HANDOFF_READY' && record.state === 'offered' && !samePause(record.paused ?? null, carried)) {
          await carryPause(workspace, cycle.remote.name, cycle.id, head, carried);
        }
        return;
      }
      // Pause is a property of the cycle: a paused source follows no move made elsewhere, an accept above all.
      if (paused !== null) {
        const by = record.holder === null ? '' : ` by '${record.holder.executor}'`;
        status.set(workspace.root, {
          remote: cycle.remote.name,
          verified_at: readAt,
          unverified_since: null,
          error: `paused (${paused.path}): the lease on the remote is ${record.state}${by}, which this machine does not follow while paused; after \`handoff unpause\` it does`,
        });
        return;
      }
      // Every record since the one this machine knows must be a legal move, and the head its descendant:
      // a forged or rewritten chain is a sync error (shown by status, the guard refuses) and moves nothing.
      const refused = await chainRefusal(workspace.root, cycle.remote.name, cycle.id, cycle.remote.lease_head, head);
      if (refused !== null) throw new Error(`${refused.error?.message ?? 'the lease chain is refused'}. ${refused.error?.hint ?? ''}`.trim());
      await catchUp(workspace, cycle.remote.name, record, head);
      if (await followLetGo(workspace, record, head)) return;
      const returnDrain = record.state === 'return_offered' ? await importReturn(workspace.root, cycle, record.manifest) : null;
      await deps.registry.dispatch(workspace.root, { type: 'REMOTE_LEASE', lease: record, lease_head: head, return_drain: returnDrain });
    } catch (error) {
      const message = (error as Error).message;
      status.set(workspace.root, {
        remote: cycle.remote.name,
        verified_at: previous?.verified_at ?? null,
        unverified_since: previous?.unverified_since ?? iso(),
        error: message,
      });
      deps.log.warn({ workspace: workspace.root, err: error }, 'lease sync failed');
    }
  }

  /** The source's pause written into its offer on the remote (or lifted from it), so other machines refuse to accept it. */
  async function carryPause(workspace: Workspace, remote: string, cycle: string, head: string, paused: ReturnType<typeof offerPauseOf>): Promise<void> {
    const moved = await chain.pause(workspace.root, remote, cycle, head, paused);
    if (!moved.ok) throw new Error(moved.envelope.error?.message ?? moved.envelope.code);
    if (moved.head !== head) await deps.registry.dispatch(workspace.root, { type: 'LEASE_HEAD', lease_head: moved.head });
  }

  /**
   * A source still offering while the chain went further (taken, then returned, let go or closed while
   * it was away or did not look): the `taken` record it missed is applied first, so it reaches TAKEOVER
   * and the head record then moves it on from there.
   */
  async function catchUp(workspace: Workspace, remote: string, record: RemoteLeaseRecord, head: string): Promise<void> {
    if (stateOf(workspace.snapshot()) === 'RETURN_HANDOFF_READY') return catchUpWithdrawnReturn(workspace, remote, record, head);
    if (stateOf(workspace.snapshot()) !== 'HANDOFF_READY' || ['offered', 'taken', 'withdrawn'].includes(record.state)) return;
    let at: string = head;
    for (let back = 0; back < MAX_CATCH_UP; back++) {
      const previous = await previousLease(workspace.root, remote, record.cycle, at);
      if (previous === null) return;
      if (previous.record.state === 'taken') {
        await deps.registry.dispatch(workspace.root, { type: 'REMOTE_LEASE', lease: previous.record, lease_head: previous.head, return_drain: null });
        return;
      }
      at = previous.head;
    }
  }

  /**
   * A primary following a return on offer while its holder withdrew it (`handoff cancel` there: a `taken`
   * record) and the chain went on (let go, or returned again): the last `taken` record since the one this
   * machine knows is applied first, so it is back in TAKEOVER and the head record moves it on from there.
   */
  async function catchUpWithdrawnReturn(workspace: Workspace, remote: string, record: RemoteLeaseRecord, head: string): Promise<void> {
    const known = workspace.snapshot().context.cycle?.remote?.lease_head ?? null;
    if (known === null || !['broken', 'released', 'return_offered'].includes(record.state)) return;
    const { later } = await leaseChainSince(workspace.root, remote, record.cycle, known, head);
    const taken = later.filter((step) => step.head !== head && step.record.state === 'taken').at(-1);
    if (taken === undefined) return;
    await deps.registry.dispatch(workspace.root, { type: 'REMOTE_LEASE', lease: taken.record, lease_head: taken.head, return_drain: null });
  }

  /**
   * The moves that leave nobody holding (the source withdrew its offer; an operator broke, or the
   * holder released, the lease elsewhere) become this machine's own cancel or break, so its old token
   * is refused here too; the record's commit is kept so it is applied once.
   */
  async function followLetGo(workspace: Workspace, record: RemoteLeaseRecord, head: string): Promise<boolean> {
    const where = `on the remote (${leaseRef(record.cycle)}, ${record.at})`;
    if (record.state === 'withdrawn') {
      await deps.registry.dispatch(workspace.root, { type: 'CANCEL', reason: `the offer was withdrawn ${where}`, withdrawn: head });
      return true;
    }
    if (record.state !== 'broken' && record.state !== 'released') return false;
    if (workspace.snapshot().context.lease.holder !== null) {
      await deps.registry.dispatch(workspace.root, { type: 'LEASE_BREAK', reason: `the lease was ${record.state} ${where}` });
    }
    await deps.registry.dispatch(workspace.root, { type: 'LEASE_HEAD', lease_head: head });
    return true;
  }

  /** The return package from the remote, written beside the out one (create-once), and proven by its sha256. */
  async function importReturn(home: string, cycle: Cycle, manifest: { path: string; sha256: string }) {
    const remote = cycle.remote?.name ?? '';
    const files = await readPackages(home, remote, cycle.id, deps.timeoutMs);
    if (files === null) throw new Error(`the remote has no package for cycle ${cycle.id}`);
    // Proven in memory first: a return package that fails is refused before a byte of it is written.
    proveTravellingPackage(files, { cycle: cycle.id, leg: 'return', manifest, remote, ref: packagesRef(cycle.id) });
    await materialize(home, cycle.id, files);
    const record = await readManifest(join(cycleDir(home, cycle.id), manifest.path), manifest.sha256);
    return importedDrain(record.manifest, manifest.path, manifest.sha256);
  }

  return {
    /**
     * Syncs one workspace with a read of the remote begun after this call. A read already in flight may
     * have listed the remote before a move the caller knows of (`handoff status` right after an accept
     * made elsewhere): the callers that come while it runs share one more read after it.
     */
    sync(workspace: Workspace): Promise<void> {
      const root = workspace.root;
      const running = inflight.get(root);
      if (running !== undefined) {
        // Whether the read in flight succeeded or not, the next one runs: its answer is the callers'.
        const follow = (): Promise<void> => {
          following.delete(root);
          return this.sync(workspace);
        };
        const next = following.get(root) ?? running.then(follow, follow);
        following.set(root, next);
        return next;
      }
      const run = syncOne(workspace).finally(() => inflight.delete(root));
      inflight.set(root, run);
      return run;
    },
    /**
     * Syncs, waiting at most `ms` (null: until it is done): false when the remote did not answer in
     * time, and the sync goes on in the background (the edit guard's answer must not wait on the network).
     * With `readBack` (a long poll's answer), the publish step's fresh read-back of this machine's offer
     * is the sync, unless the workspace is paused (the sync carries the pause into the offer) or a sync
     * since then said anything (a failure above all).
     */
    async syncWithin(workspace: Workspace, ms: number | null, readBack = false): Promise<boolean> {
      const snapshot = workspace.snapshot();
      const fresh =
        readBack && (snapshot.context.paused.workspace ?? snapshot.context.paused.global) === null ? freshReadBack(snapshot, deps.clock.now()) : null;
      const since = status.get(workspace.root);
      if (fresh !== null && (since === undefined || (since.error === null && (since.verified_at ?? '') < fresh.at))) {
        status.set(workspace.root, { remote: fresh.remote, verified_at: fresh.at, unverified_since: null, error: null });
        return true;
      }
      if (ms === null) return this.sync(workspace).then(() => true);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
      try {
        return await Promise.race([this.sync(workspace).then(() => true as const), late]);
      } finally {
        clearTimeout(timer);
      }
    },
    async syncAll(): Promise<void> {
      await Promise.all(deps.registry.all().map((workspace) => this.sync(workspace)));
    },
    /** How long a read of the remote may take: the write-through of local lease verbs uses the same bound. */
    timeoutMs: deps.timeoutMs,
    statusOf(root: string): LeaseSyncStatus | null {
      return status.get(root) ?? null;
    },
  };
}

export type LeaseSync = ReturnType<typeof createLeaseSync>;
