import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readWaysOut } from '../../fault/support/ways-out-table.js';
import { tempDir } from '../../support/git.js';

/** A project root whose docs/concepts.md has the given "Ways out" section. */
function rootWith(section: string): string {
  const root = tempDir('ways-out');
  mkdirSync(join(root, 'docs'));
  writeFileSync(join(root, 'docs', 'concepts.md'), `# Concepts\n\n## Ways out\n${section}\n## Next\n| a | b | c |\n`);
  return root;
}

const TABLE = ['| where | command | leads to |', '|---|---|---|', '| `NORMAL` | `handoff now` | `EVACUATE` |', '| `EVACUATE` | (wait) | (any) |'];

describe("the model suites' reader of docs/concepts.md's Ways out table", () => {
  it('reads the rows of the table, and a prose line with a pipe in it is not a row', () => {
    const rows = readWaysOut(rootWith(['The chain moves: offered | taken | released | withdrawn | closed, each named below.', '', ...TABLE].join('\n')));
    expect(rows).toEqual([
      { where: 'NORMAL', command: 'handoff now', leadsTo: ['EVACUATE'] },
      { where: 'EVACUATE', command: '(wait)', leadsTo: null },
    ]);
  });

  it('refuses a table row of another shape instead of dropping it', () => {
    expect(() => readWaysOut(rootWith([...TABLE, '| `PREPARE` | `handoff now` |'].join('\n')))).toThrow(/a table row has 2 cells, not 3/);
  });
});
