import type { FileHandle } from 'node:fs/promises';

const NEWLINE = 0x0a;

export interface LineChunk {
  /** Whole lines, each with its newline; '' when an over-long line was skipped. */
  readonly text: string;
  /** The offset just after the last byte this chunk consumed. */
  readonly next: number;
  /** Bytes of a line longer than the read limit that were passed over unread. */
  readonly skipped: number;
}

/**
 * The next run of complete lines at `offset`, at most `limit` bytes. A last line without its newline
 * is a line still being written: it is left for the next call (null when nothing complete follows).
 * Cutting at a newline byte never splits a UTF-8 character. A line longer than `limit` (a huge tool
 * output; telemetry lines are small) is skipped once its end is on disk, so it cannot stall the tail.
 */
export async function nextLineChunk(handle: FileHandle, offset: number, size: number, limit: number): Promise<LineChunk | null> {
  for (let scan = offset; scan < size;) {
    const length = Math.min(limit, size - scan);
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, scan);
    if (bytesRead === 0) return null;
    if (scan === offset) {
      const last = buffer.lastIndexOf(NEWLINE, bytesRead - 1);
      if (last >= 0) return { text: buffer.toString('utf8', 0, last + 1), next: offset + last + 1, skipped: 0 };
    } else {
      const first = buffer.subarray(0, bytesRead).indexOf(NEWLINE);
      if (first >= 0) return { text: '', next: scan + first + 1, skipped: scan + first + 1 - offset };
    }
    if (bytesRead < limit) return null;
    scan += bytesRead;
  }
  return null;
}

/** The first line of a file (up to `limit` bytes), or null when it is not complete yet. */
export async function firstLine(handle: FileHandle, size: number, limit: number): Promise<string | null> {
  const length = Math.min(limit, size);
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, 0);
  const end = buffer.subarray(0, bytesRead).indexOf(NEWLINE);
  return end < 0 ? null : buffer.toString('utf8', 0, end + 1);
}

/**
 * The offset just after the last newline before `size` (0 when there is none): where to start
 * tailing a file without reading its history and without starting inside a line being written.
 */
export async function lastLineEnd(handle: FileHandle, size: number, window: number): Promise<number> {
  for (let end = size; end > 0;) {
    const start = Math.max(0, end - window);
    const buffer = Buffer.alloc(end - start);
    const { bytesRead } = await handle.read(buffer, 0, end - start, start);
    const last = buffer.subarray(0, bytesRead).lastIndexOf(NEWLINE);
    if (last >= 0) return start + last + 1;
    end = start;
  }
  return 0;
}
