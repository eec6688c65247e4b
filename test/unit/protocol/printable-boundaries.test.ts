import { describe, expect, it } from 'vitest';
import { clipChars, escapeCodePoint, printable, printableJson } from '../../../protocol/printable.js';

/** Each unsafe range with the code points just outside it, which must stay as they are. */
const RANGES: readonly (readonly [number, number])[] = [
  [0x00, 0x1f],
  [0x7f, 0x9f],
  [0x061c, 0x061c],
  [0x200e, 0x200f],
  [0x2028, 0x2029],
  [0x202a, 0x202e],
  [0x2066, 0x2069],
];
const ch = (code: number) => String.fromCharCode(code);

describe('printable: exactly the unsafe code points are escaped, up to each range edge', () => {
  it('escapes each edge of every range, and leaves the code point on either side alone', () => {
    for (const [low, high] of RANGES) {
      for (const code of [low, high]) expect(printable(ch(code)), code.toString(16)).toBe(escapeCodePoint(ch(code)));
      for (const code of [low - 1, high + 1].filter((c) => c >= 0)) {
        if (!RANGES.some(([l, h]) => code >= l && code <= h)) expect(printable(ch(code)), code.toString(16)).toBe(ch(code));
      }
    }
  });

  it('a lone surrogate at either end of the surrogate range is escaped; the code points around it are not', () => {
    expect(printable('\ud800')).toBe('\\u{d800}');
    expect(printable('\udfff')).toBe('\\u{dfff}');
    expect(printable('\ud7ff\ue000')).toBe('\ud7ff\ue000');
    expect(printable('😀')).toBe('😀');
  });

  it('tab stays in both modes; a line feed only when lines are kept', () => {
    expect(printable('\t')).toBe('\t');
    expect(printable('\t', { lines: true })).toBe('\t');
    expect(printable('\n')).toBe('\\n');
    expect(printable('\n', { lines: true })).toBe('\n');
    expect(printable('\r\n')).toBe('\\r\\n');
  });
});

describe('escapeCodePoint: readable, and never interpreted', () => {
  it('two hex digits below 0x100, the code point in braces above, names for CR and LF', () => {
    expect([ch(0x01), ch(0x1b), ch(0x9f), ch(0x100), '\u202e', '\n', '\r'].map(escapeCodePoint)).toEqual([
      '\\x01',
      '\\x1b',
      '\\x9f',
      '\\u{100}',
      '\\u{202e}',
      '\\n',
      '\\r',
    ]);
  });
});

describe('clipChars: at most max characters, the cut marked', () => {
  it('keeps text of exactly max characters whole, and cuts one more to max with the mark', () => {
    expect(clipChars('abcd', 4)).toBe('abcd');
    expect(clipChars('abcde', 4)).toBe('abc…');
    expect(clipChars('abcde', 1)).toBe('…');
    expect(clipChars('abcde', 0)).toBe('…');
  });

  it('never ends on the first half of a surrogate pair', () => {
    expect(clipChars('a😀bc', 3)).toBe('a…');
    expect(clipChars('ab😀c', 4)).toBe('ab…');
    expect(clipChars('😀😀', 3)).toBe('😀…');
  });
});

describe('printableJson: four hex digits for what JSON.stringify leaves raw', () => {
  it('writes DEL, C1, bidi and line separators as \\uXXXX, and leaves their neighbours alone', () => {
    expect(printableJson('\x7f\u0085\u009f\u061c\u200e\u200f\u2028\u2029\u202a\u202e\u2066\u2069')).toBe(
      '"\\u007f\\u0085\\u009f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a\\u202e\\u2066\\u2069"',
    );
    expect(printableJson('~\u00a0\u061b\u061d\u200d\u2010\u2027\u202f\u2065\u206a')).toBe('"~\u00a0\u061b\u061d\u200d\u2010\u2027\u202f\u2065\u206a"');
  });
});
