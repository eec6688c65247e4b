import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acceptCommand, offeredAcceptWords, shellWord } from '../../../protocol/accept-command.js';

const ID = '20260820T100000Z-abcdef';

describe('acceptCommand: the one accept a person types, flags in a fixed order', () => {
  it('is the bare accept of the cycle when nothing else applies', () => {
    expect(acceptCommand(ID)).toBe(`handoff accept ${ID}`);
    expect(acceptCommand(ID, { leg: 'out', from: null, as: null })).toBe(`handoff accept ${ID}`);
  });

  it('adds --return, --from and --as in that order, each only when given', () => {
    expect(acceptCommand(ID, { leg: 'return' })).toBe(`handoff accept ${ID} --return`);
    expect(acceptCommand(ID, { from: 'origin' })).toBe(`handoff accept ${ID} --from origin`);
    expect(acceptCommand(ID, { as: 'emergency@host' })).toBe(`handoff accept ${ID} --as emergency@host`);
    expect(acceptCommand(ID, { leg: 'return', from: 'origin', as: 'me' })).toBe(`handoff accept ${ID} --return --from origin --as me`);
  });

  it('quotes a remote or executor the shell would not read as itself', () => {
    expect(acceptCommand(ID, { from: 'my remote', as: "o'neil; rm -rf ~" })).toBe(`handoff accept ${ID} --from 'my remote' --as 'o'\\''neil; rm -rf ~'`);
  });
});

describe('shellWord: a word the shell reads as itself is left bare, anything else is one quoted word', () => {
  it('leaves names, paths, URLs and user@host bare', () => {
    for (const word of ['origin', 'git@github.com:o/r.git', 'https://h.invalid/r.git', 'a_b-c.d+e=f', 'A9']) expect(shellWord(word)).toBe(word);
  });

  it('quotes the empty word, spaces, quotes, globs and shell syntax', () => {
    expect(shellWord('')).toBe("''");
    for (const word of ['a b', 'a;b', '$(x)', 'a*', '~', 'a\nb', "it's", 'x|y', 'é']) expect(shellWord(word)).toMatch(/^'.*'$/s);
  });

  it('property: the shell reads back exactly the value (POSIX single-quote rules)', () => {
    // What `sh` does with the word: unquoted text as is, '…' literally, \' as a quote.
    const unquote = (word: string): string =>
      word.replace(/'([^']*)'|\\(.)/gs, (_, quoted: string | undefined, escaped: string | undefined) => quoted ?? escaped ?? '');
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (value) => {
        expect(unquote(shellWord(value))).toBe(value);
      }),
    );
  });
});

describe('offeredAcceptWords: where and how a cycle on offer is accepted', () => {
  it('the return leg is accepted in the source checkout', () => {
    expect(offeredAcceptWords({ id: ID, remote: { name: 'origin' } }, 'return')).toEqual({
      command: `handoff accept ${ID} --return`,
      where: 'in the source checkout',
    });
  });

  it('an out leg whose lease travels is accepted from a clone through its remote, or bare in this checkout', () => {
    expect(offeredAcceptWords({ id: ID, remote: { name: 'upstream' } }, 'out')).toEqual({
      command: `handoff accept ${ID} --from upstream`,
      where: `in a clone of this repository (in this checkout: \`handoff accept ${ID}\`)`,
    });
  });

  it('an out leg nothing carries is accepted on this machine, and says why', () => {
    expect(offeredAcceptWords({ id: ID, remote: null }, 'out')).toEqual({
      command: `handoff accept ${ID}`,
      where: 'in this checkout or another checkout of this repository on this machine (no remote carries it)',
    });
  });
});
