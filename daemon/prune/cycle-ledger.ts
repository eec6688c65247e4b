import { stateOf } from '../../protocol/index.js';
import type { StepStore } from '../evacuation/step-store.js';
import type { Logger } from '../logger.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';

/**
 * What this daemon's own records prove about a cycle, kept beside its drain records in the private
 * state dir (never in the work tree, never from a remote): which checkout drained its out leg, and
 * whether that checkout took the return back. Prune deletes nothing these records do not prove.
 */
const ORIGIN = 'origin';
const RETURN_TAKEN = 'return-taken';

/** Written by the out leg's first step, before any ref of the cycle exists. */
export const recordOrigin = (store: StepStore, cycle: string, root: string): Promise<string> => store.save(cycle, ORIGIN, { root });

export function createCycleLedger(store: StepStore) {
  async function rootIn(cycle: string, name: string): Promise<unknown> {
    // A record that cannot be read proves nothing: the refs it would have let go stay.
    const record = await store.find<{ root?: unknown }>(cycle, name).catch(() => null);
    return record?.root ?? null;
  }
  return {
    /** The cycle's out leg was drained from this checkout by this daemon: one a verify fetched or a receiver took is not. */
    owns: async (cycle: string, root: string): Promise<boolean> => (await rootIn(cycle, ORIGIN)) === root,
    /** This checkout accepted the cycle's return (the accept brings the returned work into its work tree). */
    returnTaken: async (cycle: string, root: string): Promise<boolean> => (await rootIn(cycle, RETURN_TAKEN)) === root,
    /**
     * Records each return a checkout accepted, once the accept is journaled. Not awaited by the
     * change: a crash before the write leaves the `-return` refs unproven, so kept, never lost.
     */
    watch(registry: WorkspaceRegistry, log: Logger): () => void {
      return registry.observe(({ root, event, snapshot }) => {
        const cycle = snapshot.context.cycle;
        if (event.type !== 'RETURN_ACCEPTED' || stateOf(snapshot) !== 'CLOSED' || cycle === null) return;
        store
          .save(cycle.id, RETURN_TAKEN, { root, commit: cycle.return_checkpoint?.commit ?? null })
          .catch((error: unknown) =>
            log.warn({ workspace: root, cycle: cycle.id, err: error }, 'the taken-back return was not recorded; prune keeps its refs'),
          );
      });
    },
  };
}

export type CycleLedger = ReturnType<typeof createCycleLedger>;
