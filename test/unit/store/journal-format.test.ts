import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeLine, encodeLine, scanJournal } from '../../../daemon/store/journal-format.js';

const lines = (...jsons: string[]): Buffer => Buffer.concat(jsons.map((json) => encodeLine(json)));

describe('journal line format', () => {
  it('prefixes the CRC-32 of the JSON text as 8 lowercase hex digits', () => {
    const json = '{"a":"é"}';
    const expected = crc32(Buffer.from(json)).toString(16).padStart(8, '0');
    expect(encodeLine(json).toString('utf8')).toBe(`${expected} ${json}\n`);
  });

  it('pads small checksums to 8 digits', () => {
    // crc32('') is 0, the extreme case for padding.
    expect(encodeLine('').subarray(0, 9).toString()).toBe('00000000 ');
  });

  it('rejects an uppercase or short checksum prefix', () => {
    const good = encodeLine('{"a":1}').subarray(0, -1);
    expect(decodeLine(good)).toEqual({ ok: true, value: { a: 1 } });
    expect(decodeLine(Buffer.from(good.toString().toUpperCase())).ok).toBe(false);
    expect(decodeLine(good.subarray(1)).ok).toBe(false);
  });

  it('reports a checksum that matches but JSON that does not parse', () => {
    const decoded = decodeLine(encodeLine('{oops').subarray(0, -1));
    expect(decoded.ok).toBe(false);
    if (!decoded.ok) expect(decoded.reason).toContain('JSON');
  });

  it('counts lines and offsets from 1 and 0', () => {
    const bytes = Buffer.concat([lines('{"a":1}', '{"b":2}'), Buffer.from('junk\n'), lines('{"c":3}')]);
    expect(scanJournal(bytes)).toMatchObject({ kind: 'corrupt', line: 3, offset: lines('{"a":1}', '{"b":2}').length });
  });

  it('accepts an empty file', () => {
    expect(scanJournal(Buffer.alloc(0))).toEqual({ kind: 'ok', records: [], tornTail: null });
  });
});
