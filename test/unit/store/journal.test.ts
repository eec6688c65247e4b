import { appendFile, lstat, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compactionPath, Journal, JournalClosedError, repairJournal, type TornTail } from '../../../daemon/store/index.js';
import { handoffErrorOf, modeOf, tempDir } from './fixtures.js';

async function journalWith(records: object[]): Promise<string> {
  const path = join(await tempDir(), 'journal.jsonl');
  const { journal } = await Journal.open(path);
  for (const record of records) await journal.append(record);
  await journal.close();
  return path;
}

describe('Journal.open', () => {
  it('creates a missing journal with mode 0600 and no records', async () => {
    const path = join(await tempDir(), 'journal.jsonl');
    const { journal, records } = await Journal.open(path);
    await journal.close();
    expect(records).toEqual([]);
    expect(modeOf((await lstat(path)).mode)).toBe(0o600);
  });

  it('writes one `<crc32> <json>` line per record and reads them back', async () => {
    const path = await journalWith([{ n: 1 }, { text: 'line\nbreak ü' }]);
    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^[0-9a-f]{8} \{"n":1\}$/);
    expect(lines[2]).toBe('');
    const { journal, records } = await Journal.open(path);
    await journal.close();
    expect(records).toEqual([{ n: 1 }, { text: 'line\nbreak ü' }]);
  });

  it('cuts a torn tail without a newline, reports it, and appends cleanly afterwards', async () => {
    const path = await journalWith([{ n: 1 }, { n: 2 }]);
    const intact = (await stat(path)).size;
    await appendFile(path, '1234abcd {"n":3');
    const torn: TornTail[] = [];

    const { journal, records } = await Journal.open(path, { onTornTail: (info) => torn.push(info) });
    expect(records).toEqual([{ n: 1 }, { n: 2 }]);
    expect(torn).toEqual([{ offset: intact, bytes: 15 }]);
    expect((await stat(path)).size).toBe(intact);

    await journal.append({ n: 4 });
    await journal.close();
    const reopened = await Journal.open(path, { onTornTail: (info) => torn.push(info) });
    await reopened.journal.close();
    expect(reopened.records).toEqual([{ n: 1 }, { n: 2 }, { n: 4 }]);
    expect(torn).toHaveLength(1);
  });

  it('refuses a complete last line that fails its checksum: damage after the write, not a torn write', async () => {
    const path = await journalWith([{ n: 1 }, { n: 2 }]);
    const bytes = await readFile(path);
    bytes[bytes.length - 3] = '9'.charCodeAt(0); // {"n":2} → {"n":9}
    await writeFile(path, bytes);
    const error = await handoffErrorOf(Journal.open(path));
    expect(error.code).toBe('corrupt_record');
    expect(error.message).toMatch(/line 2\b/);
    expect(error.hint).toMatch(/handoff journal repair/);
    expect((await readFile(path)).equals(bytes)).toBe(true);
  });

  it('refuses a corrupt record before the last line with its line and offset, and leaves the file byte-identical', async () => {
    const path = await journalWith([{ n: 1 }, { n: 2 }, { n: 3 }]);
    const bytes = await readFile(path);
    const secondStart = bytes.indexOf('\n') + 1;
    const damaged = Buffer.from(bytes);
    damaged[secondStart + 14] = '7'.charCodeAt(0); // the digit of {"n":2}
    await writeFile(path, damaged);
    let reported = false;

    const error = await handoffErrorOf(
      Journal.open(path, {
        onTornTail: () => {
          reported = true;
        },
      }),
    );
    expect(error.code).toBe('corrupt_record');
    expect(error.data).toEqual({ path, line: 2, offset: secondStart });
    expect(error.message).toContain(path);
    expect(error.message).toContain('line 2');
    expect(error.message).toContain(`byte offset ${secondStart}`);
    expect(error.hint).toContain(`sed -n '2p' '${path}'`);
    expect(error.hint).toContain('nothing was deleted');
    expect(reported).toBe(false);
    expect((await readFile(path)).equals(damaged)).toBe(true);
  });

  it('refuses a bad line followed by a torn tail rather than cutting good data', async () => {
    const path = await journalWith([{ n: 1 }, { n: 2 }]);
    const damaged = Buffer.concat([Buffer.from('garbage line\n'), await readFile(path), Buffer.from('0000')]);
    await writeFile(path, damaged);
    const error = await handoffErrorOf(Journal.open(path));
    expect(error.data).toEqual({ path, line: 1, offset: 0 });
    expect((await readFile(path)).equals(damaged)).toBe(true);
  });

  it('refuses to follow a symlink planted at the journal path', async () => {
    const dir = await tempDir();
    const victim = join(dir, 'victim');
    await writeFile(victim, 'precious');
    const path = join(dir, 'journal.jsonl');
    await symlink(victim, path);
    await expect(Journal.open(path)).rejects.toThrow(/ELOOP/);
    expect(await readFile(victim, 'utf8')).toBe('precious');
  });
});

describe('Journal.append', () => {
  it('resolves only after its own fsync', async () => {
    const { journal } = await Journal.open(join(await tempDir(), 'journal.jsonl'));
    await journal.append({ n: 1 });
    expect(journal.stats).toEqual({ appends: 1, writes: 1, syncs: 1, compactions: 0 });
    await journal.close();
  });

  it('group-commits concurrent appends: all present in call order, fewer fsyncs than appends', async () => {
    const path = join(await tempDir(), 'journal.jsonl');
    const { journal } = await Journal.open(path);
    const count = 200;
    await Promise.all(Array.from({ length: count }, (_, i) => journal.append({ i, pad: 'p'.repeat(i) })));
    const { appends, writes, syncs } = journal.stats;
    await journal.close();

    expect(appends).toBe(count);
    expect(syncs).toBe(writes);
    expect(syncs).toBeGreaterThanOrEqual(1);
    // The first append starts a commit alone; the other 199 arrive while it is in flight.
    expect(syncs).toBeLessThanOrEqual(3);
    const { journal: reopened, records } = await Journal.open(path);
    await reopened.close();
    expect(records).toEqual(Array.from({ length: count }, (_, i) => ({ i, pad: 'p'.repeat(i) })));
  });

  it('keeps call order across batches when appends keep arriving during commits', async () => {
    const path = join(await tempDir(), 'journal.jsonl');
    const { journal } = await Journal.open(path);
    const pending: Promise<void>[] = [];
    for (let wave = 0; wave < 5; wave += 1) {
      for (let i = 0; i < 20; i += 1) pending.push(journal.append({ n: wave * 20 + i }));
      await pending[pending.length - 1];
    }
    await Promise.all(pending);
    await journal.close();
    const { journal: reopened, records } = await Journal.open(path);
    await reopened.close();
    expect(records).toEqual(Array.from({ length: 100 }, (_, n) => ({ n })));
  });

  it('rejects an append after close, and close waits for appends already accepted', async () => {
    const path = join(await tempDir(), 'journal.jsonl');
    const { journal } = await Journal.open(path);
    const accepted = journal.append({ n: 1 });
    await journal.close();
    await expect(accepted).resolves.toBeUndefined();
    await expect(journal.append({ n: 2 })).rejects.toBeInstanceOf(JournalClosedError);
    await expect(journal.close()).resolves.toBeUndefined();
    const { journal: reopened, records } = await Journal.open(path);
    await reopened.close();
    expect(records).toEqual([{ n: 1 }]);
  });

  it('rejects an oversize record with invalid_body before writing anything', async () => {
    const path = join(await tempDir(), 'journal.jsonl');
    const { journal } = await Journal.open(path, { maxRecordBytes: 100 });
    const fits = { s: 'x'.repeat(100 - '{"s":""}'.length) };
    await journal.append(fits);
    const sizeBefore = (await stat(path)).size;

    const error = await handoffErrorOf(journal.append({ s: 'x'.repeat(100) }));
    expect(error.code).toBe('invalid_body');
    expect(error.data).toMatchObject({ bytes: 108, limit: 100 });
    expect((await stat(path)).size).toBe(sizeBefore);
    expect(journal.stats.appends).toBe(1);
    await journal.close();
  });

  it('enforces the 256 KiB default limit', async () => {
    const { journal } = await Journal.open(join(await tempDir(), 'journal.jsonl'));
    const error = await handoffErrorOf(journal.append({ s: 'x'.repeat(256 * 1024) }));
    expect(error.code).toBe('invalid_body');
    await journal.close();
  });

  it('rejects a record that cannot be serialized', async () => {
    const { journal } = await Journal.open(join(await tempDir(), 'journal.jsonl'));
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect((await handoffErrorOf(journal.append(cyclic))).code).toBe('invalid_body');
    expect((await handoffErrorOf(journal.append({ toJSON: () => undefined }))).code).toBe('invalid_body');
    expect(journal.stats.writes).toBe(0);
    await journal.close();
  });
});

describe('Journal.compact', () => {
  it('replaces the file with what `produce` returns, called once every earlier append is durable; appends during the rewrite land after it', async () => {
    const path = join(await tempDir(), 'journal.jsonl');
    const { journal } = await Journal.open(path);
    for (let n = 1; n <= 50; n += 1) void journal.append({ n });
    let late: Promise<void> | null = null;
    await journal.compact(() => {
      // Nothing is queued or in flight: the snapshot can describe exactly what is on disk.
      expect(journal.stats.appends).toBe(50);
      expect(journal.size).toBe(readFileSync(path).length);
      late = journal.append({ n: 51 });
      return [{ snapshot: 50 }];
    });
    await late;
    expect(journal.size).toBe((await stat(path)).size);
    expect(journal.stats.compactions).toBe(1);
    await journal.close();
    const { journal: again, records } = await Journal.open(path);
    await again.close();
    expect(records).toEqual([{ snapshot: 50 }, { n: 51 }]);
    expect(modeOf((await lstat(path)).mode)).toBe(0o600);
  });

  it('a compaction that crashed before its rename leaves the journal whole; its temp file is removed at open', async () => {
    const path = await journalWith([{ n: 1 }, { n: 2 }]);
    await writeFile(compactionPath(path), 'half a compaction');
    const { journal, records } = await Journal.open(path);
    await journal.close();
    expect(records).toEqual([{ n: 1 }, { n: 2 }]);
    await expect(lstat(compactionPath(path))).rejects.toThrow();
  });

  it('a snapshot that cannot be written leaves the old journal in place and appends going on', async () => {
    const path = await journalWith([{ n: 1 }]);
    const { journal } = await Journal.open(path);
    await expect(journal.compact(() => [{ big: 'x'.repeat(300 * 1024) }])).rejects.toThrow(/over the/);
    await journal.append({ n: 2 });
    await journal.close();
    const { journal: again, records } = await Journal.open(path);
    await again.close();
    expect(records).toEqual([{ n: 1 }, { n: 2 }]);
  });
});

describe('repairJournal', () => {
  it('keeps the records before the first damaged line and moves the rest, byte for byte, to a new file beside it', async () => {
    const path = await journalWith([{ n: 1 }, { n: 2 }, { n: 3 }]);
    const bytes = await readFile(path);
    const second = bytes.indexOf('\n') + 1;
    bytes[second + 12] = '7'.charCodeAt(0); // {"n":2} → {"n":7}: line 2 damaged, line 3 intact after it
    await writeFile(path, bytes);
    const result = await repairJournal(path, new Date('2026-11-30T12:00:00Z'));
    expect(result).toMatchObject({ kept: 1, damage: { line: 2 }, quarantinedBytes: bytes.length - second });
    expect((await readFile(String(result.quarantine))).equals(bytes.subarray(second))).toBe(true);
    expect(modeOf((await lstat(String(result.quarantine))).mode)).toBe(0o600);
    const { journal, records } = await Journal.open(path);
    await journal.close();
    expect(records).toEqual([{ n: 1 }]);
  });

  it('a missing journal is nothing to repair, and nothing is created', async () => {
    const path = join(await tempDir(), 'journal.jsonl');
    expect(await repairJournal(path, new Date())).toEqual({ kept: 0, quarantine: null, quarantinedBytes: 0, damage: null });
    await expect(lstat(path)).rejects.toThrow();
  });

  it('a whole journal is left as it is', async () => {
    const path = await journalWith([{ n: 1 }]);
    const before = await readFile(path);
    expect(await repairJournal(path, new Date())).toEqual({ kept: 1, quarantine: null, quarantinedBytes: 0, damage: null });
    expect((await readFile(path)).equals(before)).toBe(true);
  });
});
