import { constants } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fsyncDir } from './atomic-write.js';
import { scanJournal } from './journal-format.js';

export interface JournalRepair {
  /** Records kept: every one before the first damaged line. */
  readonly kept: number;
  /** Where the damaged line and everything after it went; null when nothing needed repair. */
  readonly quarantine: string | null;
  readonly quarantinedBytes: number;
  /** The damaged line (1-based) and why, when there was one. */
  readonly damage: { readonly line: number; readonly reason: string } | null;
}

/**
 * Repairs a damaged journal, for an operator, with the daemon stopped (the caller holds the instance
 * guard): keeps the records before the first damaged line — a history that verifies and applies in
 * order — and moves the damaged line and everything after it, byte for byte, to a new file beside
 * the journal, so nothing is deleted. Records after the damage are not replayed: a change applied
 * without the one before it could describe a state that never was.
 */
export async function repairJournal(path: string, now: Date): Promise<JournalRepair> {
  const bytes = await readFile(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  // No journal yet: nothing to repair, and nothing is created.
  if (bytes === null) return { kept: 0, quarantine: null, quarantinedBytes: 0, damage: null };
  const scan = scanJournal(bytes);
  if (scan.kind === 'ok') return { kept: scan.records.length, quarantine: null, quarantinedBytes: 0, damage: null };
  const quarantine = `${path}.damaged-${now.toISOString().replace(/[:.]/g, '-')}`;
  const rest = bytes.subarray(scan.offset);
  // Create-once and fsync'd before the journal is cut: a crash in between leaves both copies.
  const out = await open(quarantine, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    await out.writeFile(rest);
    await out.sync();
  } finally {
    await out.close();
  }
  const journal = await open(path, constants.O_RDWR | constants.O_NOFOLLOW);
  try {
    await journal.truncate(scan.offset);
    await journal.sync();
  } finally {
    await journal.close();
  }
  await fsyncDir(dirname(path));
  return { kept: scan.line - 1, quarantine, quarantinedBytes: rest.length, damage: { line: scan.line, reason: scan.reason } };
}
