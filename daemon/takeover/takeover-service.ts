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
import { createJudge, judgementEnvelope, resultData } from './judgement.js';
import { materialize, realWorkspaceDir } from './materialize.js';
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

  return {
    ...createCycleRecords({ registry, clock, rootOf: deps.rootOf }),

    async verify(body: VerifyBody, progress: Progress = unfollowed): Promise<Envelope> {
      const receiverRoot = await deps.rootOf(body.repo);
      const judged = await judge(body, receiverRoot, progress);
      if (judged.kind === 'refused') return judged.envelope;
      const data = resultData(judged.source, judged.judgement, body.return === true ? 'return' : 'out');
      return judged.judgement.code === 'verified' ? success('verified', data) : judgementEnvelope(data, judged.judgement.code);
    },

    /**
     * `progress` is the caller's: a caller that went away (Ctrl-C, a CLI that gave up) cancels the accept,
     * and only until the lease starts to move: after that it goes on, as nothing else would undo it.
     */
    async accept(body: AcceptBody, progress: Progress = unfollowed): Promise<Envelope> {
      const receiverRoot = await deps.rootOf(body.repo);
      await registry.open(receiverRoot);
      const judged = await judge(body, receiverRoot, progress);
      if (judged.kind === 'refused') return judged.envelope;
      const leg = body.return === true ? 'return' : 'out';
      const { source } = judged;
      const data = resultData(source, judged.judgement, leg);
      if (judged.judgement.code !== 'verified') return judgementEnvelope(data, judged.judgement.code);
      // The lease record's directory must exist, as a real directory, before the lease moves: a link or a
      // file in its way refuses the accept, not its answer. A remote's package is written after every
      // check passed and the caller is still there, before the lease moves, only into real directories.
      await realWorkspaceDir(receiverRoot);
      if (!progress.commit())
        return failure('interrupted', `the accept of cycle ${source.cycle.id} was cancelled before the lease moved`, 'nothing was changed; accept again');
      progress.phase(`taking the lease of cycle ${source.cycle.id}${source.lease === null ? '' : ` on '${source.lease.remote}'`}`);
      if (source.package !== null) {
        await materialize(receiverRoot, source.cycle.id, source.package);
        data.manifest = join(cycleDir(receiverRoot, source.cycle.id), source.lease?.record.manifest.path ?? '');
      }
      // Another machine's cycle is imported by the winner of the chain; one of this machine is taken where its lease lives.
      const accepted =
        source.home === null ? await importAccept(source, body, receiverRoot) : await deps.homes.at(source.home).accept(leg, body.as, receiverRoot);
      if (accepted.error) return accepted;
      const token = Number((accepted.data as { token?: number } | null)?.token);
      if (judged.receiver.checkout === 'would_move') {
        progress.phase(`moving this work tree to the checkpoint of cycle ${source.cycle.id}`);
        const moved = await checkout.carryOutCheckout(source, receiverRoot, leg === 'return').then(
          () => null,
          (error: unknown) => (error as Error).message,
        );
        // Checked before the lease moved (receiver.ts): only a cause that appeared since reaches here (a
        // smudge filter that fails, a disk that fills). The out leg's accept is undone; the return leg's
        // lease stays granted (the cycle is closed) and the answer says how to finish the move.
        if (moved !== null)
          return leg === 'out'
            ? checkout.undoAccept(source, body, receiverRoot, token, moved)
            : checkout.checkoutIncomplete(source, receiverRoot, leg, token, moved);
        data.checks = data.checks.map((c) =>
          c.name === 'work_tree' ? { ...c, status: 'ok', detail: 'the work tree was moved to the checkpoint after the lease was taken' } : c,
        );
      }
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
