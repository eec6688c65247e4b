import { readFileSync } from 'node:fs';
import { crc32 } from 'node:zlib';

/**
 * An independent reader of the journal's line format (`<crc32 hex8> <json>\n`), so the suites do
 * not trust the code they test to tell them what is on disk.
 */
export interface JournalRead {
  readonly records: unknown[];
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
    return { records: [], tornBytes: 0, corruptLine: null, bytes: 0 };
  }
  const records: unknown[] = [];
  let offset = 0;
  let line = 0;
  while (offset < bytes.length) {
    line += 1;
    const end = bytes.indexOf(0x0a, offset);
    if (end === -1) return { records, tornBytes: bytes.length - offset, corruptLine: null, bytes: bytes.length };
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
      if (end + 1 === bytes.length) return { records, tornBytes: bytes.length - offset, corruptLine: null, bytes: bytes.length };
      return { records, tornBytes: 0, corruptLine: line, bytes: bytes.length };
    }
    records.push(value);
    offset = end + 1;
  }
  return { records, tornBytes: 0, corruptLine: null, bytes: bytes.length };
}
