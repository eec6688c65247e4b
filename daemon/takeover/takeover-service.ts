import { join } from 'node:path';
import { failure, success, type Envelope } from '../../protocol/index.js';
import type { AcceptBody, Config, VerifyBody } from '../../schemas/index.js';
import type { Clock } from '../clock.js';
import { cycleDir } from '../evacuation/package-writer.js';
import type { LeaseHomes } from '../lease/lease-home.js';
import { writeLeaseRecord, type LeaseRecord } from '../lease/lease-record.js';
import { receivingCycle } from '../lease/receiving.js';
import { unfollowed, type Progress } from '../operations/index.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';
import { createCheckoutMove } from './checkout-move.js';
import { createCycleRecords } from './cycle-records.js';
import { createImportAccept } from './import-accept.js';
import { createJudge, firstRefusal, judgementEnvelope, resultData, verifiedCheck, type AcceptCheck } from './judgement.js';
import { materialize, realWorkspaceDir, writableCheck } from './materialize.js';
import { createSources } from './sources.js';

export interface TakeoverDeps {
  readonly registry: WorkspaceRegistry;
  readonly config: Config;
  readonly clock: Clock;
  readonly rootOf: (dir: string) => Promise<string>;
  /** Where a cycle's lease lives: an accept of this machine's cycle, and its undo, are carried out there. */
  readonly homes: LeaseHomes;
}

/**
 * Verify-and-accept and the records. Real state wins over what a manifest says; a manifest never grants
 * anything — only the lease taken here does. Which cycle (sources.ts), what is checked (judgement.ts),
 * the lease (daemon/lease/, import-accept.ts) and the work tree (checkout-move.ts) each live in their file.
 */
export function createTakeoverService(deps: TakeoverDeps) {
  const { registry, clock, config } = deps;
  const judge = createJudge({ config, clock, sources: createSources({ registry, config }) });
  const importAccept = createImportAccept({ registry, clock, config });
  const checkout = createCheckoutMove({ registry, homes: deps.homes });
  /** In order; each refuses before anything is written. */
  const acceptChecks: readonly AcceptCheck[] = [verifiedCheck, importAccept.receiverMayImport, writableCheck];

  return {
    ...createCycleRecords({ registry, clock, rootOf: deps.rootOf }),

    async verify(body: VerifyBody, progress: Progress = unfollowed): Promise<Envelope> {
      const receiverRoot = await deps.rootOf(body.repo);
      const judged = await judge(body, receiverRoot, progress);
      if (judged.kind === 'refused') return judged.envelope;
      const data = resultData(judged.source, judged.judgement, body.return === true ? 'return' : 'out');
      return judged.judgement.code === 'verified' ? success('verified', data) : judgementEnvelope(data, judged.judgement, judged.receiver.checkout);
    },

    /**
     * `progress` is the caller's: a caller that went away (Ctrl-C, a CLI that gave up) cancels the accept,
     * and only until the first write: after that it goes on, as nothing else would undo it. Every check
     * (`acceptChecks`) runs before anything is written.
     */
    async accept(body: AcceptBody, progress: Progress = unfollowed): Promise<Envelope> {
      const receiverRoot = await deps.rootOf(body.repo);
      await registry.open(receiverRoot);
      const judged = await judge(body, receiverRoot, progress);
      if (judged.kind === 'refused') return judged.envelope;
      const refusal = await firstRefusal(acceptChecks, judged, body, receiverRoot);
      if (refusal !== null) return refusal;
      const leg = body.return === true ? 'return' : 'out';
      const { source } = judged;
      const data = resultData(source, judged.judgement, leg);
      const moves = judged.receiver.checkout === 'would_move';
      if (!progress.commit())
        return failure('interrupted', `the accept of cycle ${source.cycle.id} was cancelled before anything was written`, 'nothing was changed; accept again');
      // The return leg brings the work home before the cycle closes: a move that fails leaves the return on
      // offer, and a close that is refused puts the frozen tree back (closeRefused), so the tree and the cycle agree.
      if (leg === 'return' && moves) {
        progress.phase(`bringing the returned work of cycle ${source.cycle.id} into this work tree`);
        const why = await checkout.carryOutCheckout(source, receiverRoot, true).then(
          () => null,
          (error: unknown) => (error as Error).message,
        );
        if (why !== null) return checkout.returnNotBrought(source, receiverRoot, why);
      }
      progress.phase(`taking the lease of cycle ${source.cycle.id}${source.lease === null ? '' : ` on '${source.lease.remote}'`}`);
      await realWorkspaceDir(receiverRoot);
      if (source.package !== null) {
        await materialize(receiverRoot, source.cycle.id, source.package);
        data.manifest = join(cycleDir(receiverRoot, source.cycle.id), source.lease?.record.manifest.path ?? '');
      }
      // Another machine's cycle is imported by the winner of the chain; one of this machine is taken where its lease lives.
      const accepted =
        source.home === null
          ? await importAccept.acceptRemote(source, body, receiverRoot)
          : await deps.homes.at(source.home).accept(leg, body.as, receiverRoot);
      if (accepted.error) return leg === 'return' && moves ? checkout.closeRefused(source, receiverRoot, accepted) : accepted;
      const token = Number((accepted.data as { token?: number } | null)?.token);
      if (leg === 'out' && moves) {
        progress.phase(`checking the checkpoint of cycle ${source.cycle.id} out on the branch handoff/${source.cycle.id}`);
        const moved = await checkout.carryOutCheckout(source, receiverRoot, false).then(
          () => null,
          (error: unknown) => (error as Error).message,
        );
        // Checked before the lease moved (receiver.ts): only a cause that appeared since reaches here (a
        // smudge filter that fails, a disk that fills). The accept is undone and the answer says how to finish the move.
        if (moved !== null) return checkout.undoAccept(source, body, receiverRoot, token, moved);
      }
      if (moves)
        data.checks = data.checks.map((c) =>
          c.name === 'work_tree'
            ? {
                ...c,
                status: 'ok',
                detail:
                  leg === 'return'
                    ? 'the returned work was brought into the work tree'
                    : `the checkpoint was checked out on the branch handoff/${source.cycle.id}`,
              }
            : c,
        );
      const lease: LeaseRecord = { cycle: source.cycle.id, home: source.home?.root ?? receiverRoot, executor: body.as, token };
      // The lease is taken and journaled: a record that cannot be written must not turn the answer into a failure.
      const note = await writeLeaseRecord(receiverRoot, lease).then(
        () => null,
        (error: unknown) =>
          `the lease record could not be written (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); pass --token ${token} to return or close`,
      );
      return success('accepted', { ...data, token, state: (accepted.data as { state?: string }).state, executor: body.as, ...(note === null ? {} : { note }) });
    },

    /** For status in a receiver's checkout: the cycle it took over, if any. */
    receiving(root: string) {
      const found = receivingCycle(registry, root);
      return found === null ? null : { ...found, holder: registry.find(found.home)?.snapshot().context.lease.holder ?? null };
    },
  };
}

export type TakeoverService = ReturnType<typeof createTakeoverService>;
