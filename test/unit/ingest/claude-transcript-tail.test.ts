import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { transcriptStop } from '../../../daemon/ingest/claude-transcript-tail.js';
import { tempDir } from '../../support/git.js';

const SESSION = 's-1';
const apiError = JSON.stringify({ type: 'assistant', isApiErrorMessage: true, error: 'rate_limit', sessionId: SESSION, timestamp: '2026-08-20T09:59:58.412Z' });
const answer = (size: number) => JSON.stringify({ type: 'assistant', sessionId: SESSION, message: { content: [{ type: 'text', text: 'x'.repeat(size) }] } });
const bookkeeping = JSON.stringify({ type: 'cost-state', sessionId: SESSION });

function transcript(...lines: string[]): string {
  const path = join(tempDir('transcript'), `${SESSION}.jsonl`);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

describe('reading the stop from the transcript a SessionEnd payload names', () => {
  it('the last assistant record of a long transcript, from its last 64 KiB', async () => {
    const long = transcript(answer(200_000), apiError, bookkeeping);
    expect(await transcriptStop(long, SESSION)).toEqual({ line: apiError, atMs: Date.parse('2026-08-20T09:59:58.412Z') });
  });

  it('an error followed by an answer longer than the tail window is not read: the cut answer hides it', async () => {
    expect(await transcriptStop(transcript(apiError, answer(100_000), bookkeeping), SESSION)).toEqual({ skipped: 'its last answer is no API error' });
  });

  it('a path from the payload that is relative, not .jsonl or a symlink is not read', async () => {
    const real = transcript(apiError);
    expect(await transcriptStop('projects/s-1.jsonl', SESSION)).toEqual({ skipped: 'not an absolute .jsonl path' });
    expect(await transcriptStop(real.replace(/\.jsonl$/, '.json'), SESSION)).toEqual({ skipped: 'not an absolute .jsonl path' });
    const link = join(tempDir('link'), 'other.jsonl');
    symlinkSync(real, link);
    await expect(transcriptStop(link, SESSION)).rejects.toMatchObject({ code: 'ELOOP' });
  });

  it('a directory named like a transcript is not read', async () => {
    const dir = join(tempDir('dir'), 'x.jsonl');
    mkdirSync(dir);
    await expect(transcriptStop(dir, SESSION)).resolves.toEqual({ skipped: 'not a regular file of this user' });
  });
});
