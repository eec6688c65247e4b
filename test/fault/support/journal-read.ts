import { closeSync, fstatSync, openSync, readFileSync, statSync } from 'node:fs';
import { crc32 } from 'node:zlib';

/**
 * An independent reader of the journal's line format (`<crc32 hex8> <json>\n`) and of its record
 * shapes, so the suites do not trust the code they test to tell them what is on disk.
 */
export interface JournalRead {
  /** Each change record, with the whole state it led to (`context`), folded from the snapshots and deltas. */
  readonly records: unknown[];
  /** Every record as written: snapshots, changes (deltas) and coalesced readings. */
  readonly raw: unknown[];
  /** Bytes after the last newline: a torn tail the daemon has not cut yet. */
  readonly tornBytes: number;
  /** The first line that fails its checksum or does not parse, with more data after it. */
  readonly corruptLine: number | null;
  readonly bytes: number;
}

export function readJournal(path: string): JournalRead {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return { records: [], raw: [], tornBytes: 0, corruptLine: null, bytes: 0 };
  }
  const raw: unknown[] = [];
  let offset = 0;
  let line = 0;
  let tornBytes = 0;
  let corruptLine: number | null = null;
  while (offset < bytes.length) {
    line += 1;
    const end = bytes.indexOf(0x0a, offset);
    if (end === -1) {
      tornBytes = bytes.length - offset;
      break;
    }
    const text = bytes.subarray(offset, end);
    const sum = text.subarray(0, 8).toString('latin1');
    const body = text.subarray(9);
    let value: unknown = undefined;
    if (text[8] === 0x20 && crc32(body).toString(16).padStart(8, '0') === sum) {
      try {
        value = JSON.parse(body.toString('utf8'));
      } catch {
        value = undefined;
      }
    }
    if (value === undefined) {
      if (end + 1 === bytes.length) tornBytes = bytes.length - offset;
      else corruptLine = line;
      break;
    }
    raw.push(value);
    offset = end + 1;
  }
  return { records: fold(raw), raw, tornBytes, corruptLine, bytes: bytes.length };
}

type Loose = { kind?: string; root?: string; state?: string; context?: Record<string, unknown>; set?: Record<string, unknown>; readings?: unknown };

/** Snapshots set a workspace's state, deltas replace the fields they name, readings records the readings map. */
function fold(raw: readonly unknown[]): unknown[] {
  const state = new Map<string, { state: string; context: Record<string, unknown> }>();
  const changes: unknown[] = [];
  for (const value of raw) {
    const r = value as Loose;
    if (typeof r.root !== 'string') continue;
    const base = state.get(r.root);
    if (r.kind === 'snapshot' || (r.kind === 'workspace' && r.context !== undefined)) {
      state.set(r.root, { state: String(r.state), context: r.context ?? {} });
    } else if (r.kind === 'readings' && base !== undefined) {
      state.set(r.root, { ...base, context: { ...base.context, readings: r.readings } });
    } else if (r.kind === 'workspace' && base !== undefined) {
      const delta = r.readings as { put?: Record<string, unknown>; drop?: string[] } | undefined;
      const dropped = new Set(delta?.drop ?? []);
      const merged = { ...(base.context['readings'] as Record<string, unknown>), ...(delta?.put ?? {}) };
      const readings = Object.fromEntries(Object.entries(merged).filter(([key]) => !dropped.has(key)));
      state.set(r.root, { state: String(r.state), context: { ...base.context, ...r.set, readings } });
    }
    if (r.kind === 'workspace') changes.push({ ...r, ...state.get(r.root) });
  }
  return changes;
}

/** Where a journal stood: its file (a compaction renames a new one into its name) and its size. */
export interface JournalMark {
  readonly ino: number;
  readonly size: number;
}

export function journalMark(path: string): JournalMark {
  const stats = statSync(path, { throwIfNoEntry: false });
  return { ino: stats?.ino ?? 0, size: stats?.size ?? 0 };
}

export function journalMoved(path: string, mark: JournalMark): boolean {
  const now = journalMark(path);
  return now.ino !== mark.ino || now.size !== mark.size;
}

/**
 * The events of the change records written since `mark`, in order. After a compaction, those of the
 * whole new file: the changes before it are folded into its snapshots, unseen. A line still being
 * written is left out; the suites that damage the journal check checksums, this only reads.
 */
export function changesSince(path: string, mark: JournalMark): string[] {
  const fd = openSync(path, 'r');
  try {
    const from = fstatSync(fd).ino === mark.ino ? mark.size : 0;
    const text = readFileSync(fd).subarray(from).toString('utf8');
    return text
      .slice(0, text.lastIndexOf('\n') + 1)
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line.slice(9)) as Loose & { event?: { type?: string } })
      .filter((record) => record.kind === 'workspace')
      .map((record) => record.event?.type ?? '(a change without an event)');
  } finally {
    closeSync(fd);
  }
}
