import { describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../../adapters/agents/index.js';

/** Applies a unified diff to `before`: the hunks must say exactly how to get `after`. */
function patch(before: string, diff: string): string {
  const lines = before === '' ? [] : before.replace(/\n$/, '').split('\n');
  const out: string[] = [];
  let at = 0;
  for (const hunk of diff.split(/^@@ /m).slice(1)) {
    const [header = '', ...body] = hunk.replace(/\n$/, '').split('\n');
    const start = Number(/^-(\d+)/.exec(header)?.[1] ?? 0);
    const from = Math.max(0, start - 1);
    const oldCount = Number(/^-\d+,(\d+)/.exec(header)?.[1] ?? 0);
    out.push(...lines.slice(at, oldCount === 0 ? start : from));
    at = oldCount === 0 ? start : from;
    for (const line of body) {
      if (line.startsWith('+')) out.push(line.slice(1));
      else {
        expect(lines[at]).toBe(line.slice(1));
        if (line.startsWith(' ')) out.push(line.slice(1));
        at += 1;
      }
    }
  }
  out.push(...lines.slice(at));
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}

const numbered = (count: number, prefix = 'line') => Array.from({ length: count }, (_, i) => `${prefix} ${i}`);

describe('unifiedDiff', () => {
  it('is empty for equal texts and all additions for a new file', () => {
    expect(unifiedDiff('f', 'a\nb\n', 'a\nb\n')).toBe('');
    expect(unifiedDiff('f', null, 'a\nb\n')).toBe('--- /dev/null\n+++ f\n@@ -0,0 +1,2 @@\n+a\n+b\n');
  });

  it('shows two distant insertions in a long file as two hunks with three lines of context', () => {
    const before = numbered(20_000);
    const after = [...before.slice(0, 10), 'NEW A', ...before.slice(10, 19_990), 'NEW B1', 'NEW B2', ...before.slice(19_990)];
    const diff = unifiedDiff('f', `${before.join('\n')}\n`, `${after.join('\n')}\n`);
    expect(diff.match(/^@@ /gm)).toHaveLength(2);
    expect(diff).toContain('@@ -8,6 +8,7 @@\n line 7\n line 8\n line 9\n+NEW A\n line 10\n');
    expect(diff).toContain('@@ -19988,6 +19989,8 @@\n');
    expect(patch(`${before.join('\n')}\n`, diff)).toBe(`${after.join('\n')}\n`);
  });

  it('gives a patch that rebuilds the new text, removals before additions, for mixed edits', () => {
    const cases: [string[], string[]][] = [
      [
        ['a', 'b', 'c', 'd'],
        ['a', 'x', 'c', 'y', 'd', 'z'],
      ],
      [
        ['same', 'old 1', 'old 2', 'same'],
        ['same', 'new 1', 'same'],
      ],
      [numbered(50), [...numbered(50).filter((_, i) => i % 7 !== 0), 'tail']],
      [['x'], []],
    ];
    for (const [a, b] of cases) {
      const before = `${a.join('\n')}\n`;
      const after = b.length === 0 ? '' : `${b.join('\n')}\n`;
      const diff = unifiedDiff('f', before, after);
      expect(patch(before, diff)).toBe(after);
      expect(diff).not.toMatch(/^\+.*\n-/m);
    }
  });

  it('past a thousand changed lines the middle is shown removed then added, still a correct patch', () => {
    const before = numbered(3000);
    const after = numbered(3000, 'other');
    const diff = unifiedDiff('f', `${before.join('\n')}\n`, `${after.join('\n')}\n`);
    expect(diff.startsWith('--- f\n+++ f\n@@ -1,3000 +1,3000 @@\n-line 0\n')).toBe(true);
    expect(patch(`${before.join('\n')}\n`, diff)).toBe(`${after.join('\n')}\n`);
  });
});
