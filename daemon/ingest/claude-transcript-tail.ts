import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { lastApiError } from '../../adapters/telemetry/claude-transcript.js';

/** A transcript's last records fit here many times over; a longer answer only hides what came before it. */
const TAIL_BYTES = 64 * 1024;

/**
 * The API error a Claude Code session stopped on, read from the end of the transcript its SessionEnd
 * payload names (adapters/telemetry/claude-transcript.ts), or why nothing was read. The path comes from
 * a payload: only an absolute `.jsonl` path to a regular file of this user is opened (no symlink
 * followed), and only its last 64 KiB are read.
 */
export async function transcriptStop(path: string, sessionId: string): Promise<{ line: string; atMs: number } | { skipped: string }> {
  if (!isAbsolute(path) || !path.endsWith('.jsonl')) return { skipped: 'not an absolute .jsonl path' };
  const file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const facts = await file.stat();
    if (!facts.isFile() || facts.uid !== process.getuid?.()) return { skipped: 'not a regular file of this user' };
    const start = Math.max(0, facts.size - TAIL_BYTES);
    const buffer = Buffer.alloc(facts.size - start);
    const { bytesRead } = await file.read(buffer, 0, buffer.length, start);
    return lastApiError(buffer.subarray(0, bytesRead).toString('utf8'), sessionId, start === 0) ?? { skipped: 'its last answer is no API error' };
  } finally {
    await file.close();
  }
}
