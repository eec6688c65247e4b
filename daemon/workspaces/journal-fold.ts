import { applyDelta, HandoffError, STATES, type PersistedWorkspace, type WorkspaceDelta } from '../../protocol/index.js';
import type { Reading } from '../../schemas/index.js';

/**
 * Folds the journal's records into the latest state of each workspace. Four shapes are read: a
 * snapshot (a whole workspace: a base, or a compaction), a change (a delta on the state before it),
 * coalesced readings, and the whole-snapshot change records that journals written before deltas hold.
 */
export function foldJournal(records: readonly unknown[]): Map<string, PersistedWorkspace> {
  const latest = new Map<string, PersistedWorkspace>();
  records.forEach((value, index) => {
    const record = value as Record<string, unknown> | null;
    const where = `journal record ${index + 1}`;
    if (typeof record !== 'object' || record === null || typeof record['root'] !== 'string') throw corrupt(where, 'is not a workspace record', index);
    const root = record['root'];
    const base = latest.get(root);
    if (record['kind'] === 'snapshot' || (record['kind'] === 'workspace' && 'context' in record)) {
      latest.set(root, whole(record, root, where, index));
    } else if (record['kind'] === 'workspace') {
      if (base === undefined) throw corrupt(where, `changes workspace ${root} before any snapshot of it`, index);
      if (!isState(record['state']) || typeof record['set'] !== 'object' || record['set'] === null)
        throw corrupt(where, 'is a change without a state or fields', index);
      latest.set(root, applyDelta(base, record as unknown as WorkspaceDelta));
    } else if (record['kind'] === 'readings') {
      if (base === undefined) throw corrupt(where, `holds readings of workspace ${root} before any snapshot of it`, index);
      if (typeof record['readings'] !== 'object' || record['readings'] === null) throw corrupt(where, 'holds no readings map', index);
      latest.set(root, { ...base, context: { ...base.context, readings: record['readings'] as Record<string, Reading> } });
    } else {
      throw corrupt(where, 'is not a workspace record', index);
    }
  });
  return latest;
}

function whole(record: Record<string, unknown>, root: string, where: string, index: number): PersistedWorkspace {
  const context = record['context'] as { root?: unknown } | null;
  if (!isState(record['state']) || typeof context !== 'object' || context === null || context.root !== root) {
    throw corrupt(where, 'is a snapshot without a known state or a context of its own root', index);
  }
  return record as unknown as PersistedWorkspace;
}

const isState = (value: unknown): boolean => typeof value === 'string' && (STATES as readonly string[]).includes(value);

function corrupt(where: string, what: string, index: number): HandoffError {
  return new HandoffError('corrupt_record', `${where} ${what}`, 'inspect the journal in the state dir; nothing was deleted', { record: index + 1 });
}
