import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clipChars, printable, printableDeep, printableJson } from '../../../protocol/printable.js';
import { UNPRINTABLE } from './hostile-text.js';

describe('printable', () => {
  it('shows terminal controls escaped: ESC sequences (CSI, OSC title and clipboard), NUL, DEL, C1', () => {
    expect(printable('a\x1b]0;owned\x07b')).toBe('a\\x1b]0;owned\\x07b');
    expect(printable('\x1b]52;c;cm0gLXJmIH4=\x07')).toBe('\\x1b]52;c;cm0gLXJmIH4=\\x07');
    expect(printable('\x1b[2J\x1b[8mhidden')).toBe('\\x1b[2J\\x1b[8mhidden');
    expect(printable('\x00\x7f\u009b31m\u0085')).toBe('\\x00\\x7f\\x9b31m\\x85');
  });

  it('shows bidi overrides, isolates and marks escaped, so `…txt.exe` cannot pose as `…exe.txt`', () => {
    expect(printable('invoice\u202etxt.exe')).toBe('invoice\\u{202e}txt.exe');
    for (const ch of ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c']) {
      expect(printable(`x${ch}y`)).toBe(`x\\u{${ch.codePointAt(0)?.toString(16)}}y`);
    }
  });

  it('one line unless lines are allowed: LF, CR, U+2028 escaped; with lines, LF and CRLF stay LF and a lone CR is escaped', () => {
    expect(printable('a\nb\r\nc\rd\u2028e\tf')).toBe('a\\nb\\r\\nc\\rd\\u{2028}e\tf');
    expect(printable('a\nb\r\nc\rd\u2028e\tf', { lines: true })).toBe('a\nb\nc\\rd\\u{2028}e\tf');
  });

  it('leaves ordinary text alone, other scripts and emoji included', () => {
    for (const text of ['plain ASCII `code` ~ #', 'Grüße — 日本語 — עברית — العربية', 'family 👨‍👩‍👧 ok']) expect(printable(text, { lines: true })).toBe(text);
  });

  it('bounds the length, never cutting a surrogate pair', () => {
    expect(printable('abcdef', { max: 4 })).toBe('abc…');
    expect(clipChars('ab😀cd', 4)).toBe('ab…');
  });

  it('property: nothing unprintable survives, in either mode', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        expect(printable(text)).not.toMatch(UNPRINTABLE);
        expect(printable(text)).not.toContain('\n');
        expect(printable(text, { lines: true })).not.toMatch(UNPRINTABLE);
        expect(printable(text, { lines: true })).not.toContain('\r');
      }),
      { numRuns: 500 },
    );
  });

  it('printableDeep: every string of a view, keys too; numbers, booleans and null as they are', () => {
    expect(printableDeep({ 'k\x1b': ['a\u202e', 1, null, true, { n: 'b\nc' }] })).toEqual({ 'k\\x1b': ['a\\u{202e}', 1, null, true, { n: 'b\\nc' }] });
    expect(printableDeep({ long: 'x'.repeat(10) }, { max: 4 })).toEqual({ long: 'xxx…' });
  });

  it('printableJson: the same value for a program, nothing raw for a terminal', () => {
    const value = { text: 'a\u202eb\u009b\x7f\u2028\x1b', n: 1 };
    const json = printableJson(value);
    expect(json).not.toMatch(UNPRINTABLE);
    expect(JSON.parse(json)).toEqual(value);
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(JSON.parse(printableJson(v))).toEqual(JSON.parse(JSON.stringify(v)));
      }),
      { numRuns: 200 },
    );
  });
});
