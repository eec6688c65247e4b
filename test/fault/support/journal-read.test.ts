import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Journal } from '../../../daemon/store/index.js';
import { tempDir } from '../../support/git.js';
import { changesSince, journalMark, journalMoved } from './journal-read.js';

// The fuzz suite's "refused but journaled" checks read the journal through these: they must see what the
// daemon's own journal writes after a mark, or those checks hold whatever a refused request wrote.
const change = (type: string) => ({ kind: 'workspace', root: '/r', state: 'NORMAL', set: {}, event: { type } });
const snapshot = { kind: 'snapshot', root: '/r', state: 'NORMAL', context: {} };

describe("the fault suites' reader of changes since a mark", () => {
  it('names each change written after the mark, not those before it, nor snapshots or readings', async () => {
    const path = join(tempDir('journal-read'), 'journal.jsonl');
    const { journal } = await Journal.open(path);
    try {
      await journal.append(snapshot);
      await journal.append(change('LEASE_ACQUIRE'));
      const mark = journalMark(path);
      expect(journalMoved(path, mark)).toBe(false);
      expect(changesSince(path, mark)).toEqual([]);
      await journal.append({ kind: 'readings', root: '/r', readings: {} });
      await journal.append(change('LEASE_BREAK'));
      await journal.append(change('PAUSE_SET'));
      expect(journalMoved(path, mark)).toBe(true);
      expect(changesSince(path, mark)).toEqual(['LEASE_BREAK', 'PAUSE_SET']);
    } finally {
      await journal.close();
    }
  });

  it('after a compaction, names the changes of the new file written after its snapshots', async () => {
    const path = join(tempDir('journal-read'), 'journal.jsonl');
    const { journal } = await Journal.open(path);
    try {
      for (let i = 0; i < 5; i += 1) await journal.append(change('READING'));
      const mark = journalMark(path);
      await journal.compact(() => [snapshot]);
      await journal.append(change('CANCEL'));
      expect(journalMoved(path, mark)).toBe(true);
      expect(changesSince(path, mark)).toEqual(['CANCEL']);
    } finally {
      await journal.close();
    }
  });
});
