import type { Journal } from '../store/index.js';
import type { Logger } from '../logger.js';
import type { WorkspaceRecord } from './workspace.js';

export interface WorkspaceJournalOptions {
  /** Never compact below this size. */
  readonly compactAfterBytes: number;
  /** Every workspace whole, as the compacted journal must start. */
  readonly snapshot: () => WorkspaceRecord[];
  readonly log: Logger;
}

/** How much larger than its last compacted size the journal may grow before the next compaction. */
const GROWTH_FACTOR = 4;

/**
 * The journal of the workspaces, kept small: once it holds far more than the live state (history of
 * changes), it is rewritten as one snapshot per workspace. Start-up then reads the live state and a
 * short tail, never a history that grows with every reading or cycle ever seen.
 */
export function createWorkspaceJournal(journal: Journal, options: WorkspaceJournalOptions) {
  let compactedSize = 0;
  let running: Promise<void> | null = null;
  const threshold = () => Math.max(options.compactAfterBytes, GROWTH_FACTOR * compactedSize);

  function compactIfLarge(): Promise<void> {
    if (running !== null || journal.size <= threshold()) return running ?? Promise.resolve();
    const before = journal.size;
    running = journal
      .compact(options.snapshot)
      .then(
        () => {
          compactedSize = journal.size;
          options.log.info({ before, after: journal.size }, 'journal compacted');
        },
        // The old journal stays whole when a compaction fails: appends go on, the next one retries.
        (error: unknown) => options.log.error({ err: error }, 'journal compaction failed'),
      )
      .finally(() => (running = null));
    return running;
  }

  return {
    async append(record: WorkspaceRecord): Promise<void> {
      await journal.append(record);
      // Not awaited: the change is durable already; the rewrite only holds up later appends.
      void compactIfLarge();
    },
    compactIfLarge,
  };
}

export type WorkspaceJournal = ReturnType<typeof createWorkspaceJournal>;
