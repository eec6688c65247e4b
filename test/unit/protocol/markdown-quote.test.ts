import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { agentList, codeSpan, fenced, printable } from '../../../protocol/index.js';

/** Agent text in HANDOFF.md is data: its quoting can never be closed by what it quotes. */
const textArb = fc.string({ unit: fc.constantFrom('`', '``', ' ', 'a', '\n', '#', '-') as fc.Arbitrary<string>, maxLength: 30 });

describe('codeSpan', () => {
  it('reads back as exactly the printable text, and nothing inside closes it early', () => {
    fc.assert(
      fc.property(textArb, (text) => {
        const span = codeSpan(text);
        const fence = /^`+/.exec(span)?.[0] ?? '';
        expect(span.endsWith(fence)).toBe(true);
        const inner = span.slice(fence.length, span.length - fence.length);
        // Markdown strips one space each side only when both are there: that is the pad.
        const padded = inner.length >= 2 && inner.startsWith(' ') && inner.endsWith(' ') && /^[`\s]|[`\s]$/.test(printable(text, { max: 300 }));
        expect(padded ? inner.slice(1, -1) : inner).toBe(printable(text, { max: 300 }));
        expect(inner.split(fence).length).toBe(1);
        expect(span).not.toContain('\n');
      }),
      { numRuns: 300 },
    );
  });

  it('cuts long text at its maximum', () => {
    expect(codeSpan('abcdef', 4)).toBe('`abc…`');
    expect(codeSpan('a'.repeat(301))).toHaveLength(302);
  });
});

describe('fenced', () => {
  it('uses a fence longer than any backtick run inside, at least three, with the info string', () => {
    expect(fenced('plain')).toEqual(['```text', 'plain', '```']);
    expect(fenced('a ```` b', 'sh')).toEqual(['`````sh', 'a ```` b', '`````']);
    expect(fenced('one\r\ntwo')).toEqual(['```text', 'one', 'two', '```']);
  });

  it('an agent list keeps each item one entry, continuation lines indented', () => {
    expect(agentList(['first\nmore', 'second'])).toEqual(['_Written by the source agent, unverified:_', '', '```text', '- first', '  more', '- second', '```']);
  });
});
