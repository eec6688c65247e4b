import { describe, expect, it } from 'vitest';
import { AGENT_LABEL, agentList, agentText, codeSpan, fenced } from '../../../protocol/markdown-quote.js';

describe('codeSpan: a fence one longer than the longest backtick run, padded only where Markdown needs it', () => {
  it.each([
    ['plain', '`plain`'],
    ['a`b', '``a`b``'],
    ['a``b`c', '```a``b`c```'],
    ['`lead', '`` `lead ``'],
    ['trail`', '`` trail` ``'],
    [' space', '`  space `'],
    ['space ', '` space  `'],
    ['', '``'],
  ])('%j is %j', (text, span) => {
    expect(codeSpan(text)).toBe(span);
  });

  it('escapes what it holds onto its one line before measuring it', () => {
    expect(codeSpan('a\nb')).toBe('`a\\nb`');
  });
});

describe('fenced: at least three backticks, one more than any run inside, with the info string', () => {
  it('counts the longest run anywhere in the text, over every line', () => {
    expect(fenced('``` a\nb ````` c\n`', 'sh')).toEqual(['``````sh', '``` a', 'b ````` c', '`', '``````']);
    expect(fenced('``')).toEqual(['```text', '``', '```']);
    expect(fenced('a\u202eb\rc')).toEqual(['```text', 'a\\u{202e}b\\rc', '```']);
  });
});

describe("agentText and agentList: the agent's words under the label that says nobody checked them", () => {
  it('the label is the one the document explains', () => {
    expect(AGENT_LABEL).toBe('_Written by the source agent, unverified:_');
    expect(agentText('x')).toEqual([AGENT_LABEL, '', '```text', 'x', '```']);
  });

  it('every kind of line break in an item continues the item, indented', () => {
    expect(agentList(['a\r\nb\rc\nd'])).toEqual([AGENT_LABEL, '', '```text', '- a', '  b', '  c', '  d', '```']);
  });
});
