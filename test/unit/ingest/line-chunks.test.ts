import { open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { firstLine, lastLineEnd, nextLineChunk } from '../../../daemon/ingest/line-chunks.js';
import { tempDir } from '../../support/git.js';

async function withFile<T>(text: string, use: (handle: Awaited<ReturnType<typeof open>>, size: number) => Promise<T>): Promise<T> {
  const path = join(tempDir('chunks'), 'rollout-x.jsonl');
  await writeFile(path, text);
  const handle = await open(path, 'r');
  try {
    return await use(handle, Buffer.byteLength(text));
  } finally {
    await handle.close();
  }
}

describe('nextLineChunk', () => {
  it('gives whole lines and leaves a partial last line for later', async () => {
    await withFile('{"a":1}\n{"b":2}\n{"c":', async (handle, size) => {
      expect(await nextLineChunk(handle, 0, size, 1024)).toEqual({ text: '{"a":1}\n{"b":2}\n', next: 16, skipped: 0 });
      expect(await nextLineChunk(handle, 16, size, 1024)).toBeNull();
    });
  });

  it('reads in pieces of the limit and never splits a UTF-8 character', async () => {
    const text = 'é1\né2\né3\n';
    await withFile(text, async (handle, size) => {
      const first = await nextLineChunk(handle, 0, size, 8);
      expect(first).toEqual({ text: 'é1\né2\n', next: 8, skipped: 0 });
      expect(await nextLineChunk(handle, 8, size, 8)).toEqual({ text: 'é3\n', next: 12, skipped: 0 });
    });
  });

  it('skips a line longer than the limit once its end is on disk', async () => {
    await withFile(`${'x'.repeat(30)}\nok\n`, async (handle, size) => {
      expect(await nextLineChunk(handle, 0, size, 8)).toEqual({ text: '', next: 31, skipped: 31 });
      expect(await nextLineChunk(handle, 31, size, 8)).toEqual({ text: 'ok\n', next: 34, skipped: 0 });
    });
    await withFile('x'.repeat(30), async (handle, size) => {
      expect(await nextLineChunk(handle, 0, size, 8)).toBeNull();
    });
  });
});

describe('lastLineEnd and firstLine', () => {
  it('start a tail after the last whole line, and read the session line', async () => {
    await withFile('{"meta":1}\n{"a":1}\n{"par', async (handle, size) => {
      expect(await lastLineEnd(handle, size, 4)).toBe(19);
      expect(await firstLine(handle, size, 1024)).toBe('{"meta":1}\n');
    });
    await withFile('no newline yet', async (handle, size) => {
      expect(await lastLineEnd(handle, size, 4)).toBe(0);
      expect(await firstLine(handle, size, 1024)).toBeNull();
    });
  });
});
