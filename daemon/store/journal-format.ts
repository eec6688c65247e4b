import { crc32 } from 'node:zlib';

/**
 * The journal's line format: `<crc32 of the JSON text, 8 lowercase hex> <json>\n`. Pure functions
 * over bytes so recovery rules can be tested without a file.
 */

const NEWLINE = 0x0a;
const SPACE = 0x20;
const CHECKSUM_DIGITS = 8;
const HEX8 = /^[0-9a-f]{8}$/;

export function checksumOf(json: Uint8Array): string {
  return crc32(json).toString(16).padStart(CHECKSUM_DIGITS, '0');
}

/** `json` must come from JSON.stringify, which escapes every newline, so one record is one line. */
export function encodeLine(json: string): Buffer {
  const body = Buffer.from(json, 'utf8');
  return Buffer.concat([Buffer.from(`${checksumOf(body)} `, 'ascii'), body, Buffer.from('\n', 'ascii')]);
}

export type DecodedLine = { ok: true; value: unknown } | { ok: false; reason: string };

/** Decodes one line without its trailing newline. */
export function decodeLine(line: Uint8Array): DecodedLine {
  const prefix = Buffer.from(line.subarray(0, CHECKSUM_DIGITS)).toString('latin1');
  if (line.length <= CHECKSUM_DIGITS || line[CHECKSUM_DIGITS] !== SPACE || !HEX8.test(prefix)) {
    return { ok: false, reason: 'the line does not start with an 8-digit checksum and a space' };
  }
  const body = line.subarray(CHECKSUM_DIGITS + 1);
  const actual = checksumOf(body);
  if (actual !== prefix) {
    return { ok: false, reason: `checksum mismatch (recorded ${prefix}, computed ${actual})` };
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.from(body).toString('utf8')) as unknown };
  } catch (error) {
    return { ok: false, reason: `the checksum matches but the JSON does not parse (${String(error)})` };
  }
}

export interface TornTail {
  /** Byte offset where the torn tail starts; the file is cut back to this length. */
  readonly offset: number;
  /** How many bytes were cut. */
  readonly bytes: number;
}

export type ScanResult = { kind: 'ok'; records: unknown[]; tornTail: TornTail | null } | { kind: 'corrupt'; line: number; offset: number; reason: string };

/**
 * Reads every record. Only an incomplete last line (no newline: the write in flight when the process
 * died) is a torn tail. A complete line that fails its checksum or does not parse was written whole
 * and damaged afterwards (bit rot, a bad edit) — wherever it is, even last, it is reported and never
 * cut: cutting would silently drop a record that was acknowledged.
 */
export function scanJournal(bytes: Uint8Array): ScanResult {
  const records: unknown[] = [];
  let offset = 0;
  let line = 1;
  while (offset < bytes.length) {
    const end = bytes.indexOf(NEWLINE, offset);
    if (end === -1) {
      return { kind: 'ok', records, tornTail: { offset, bytes: bytes.length - offset } };
    }
    const decoded = decodeLine(bytes.subarray(offset, end));
    if (!decoded.ok) return { kind: 'corrupt', line, offset, reason: decoded.reason };
    records.push(decoded.value);
    offset = end + 1;
    line += 1;
  }
  return { kind: 'ok', records, tornTail: null };
}
