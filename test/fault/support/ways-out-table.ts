import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One row of docs/concepts.md's "Ways out" table: from where, which command, to where (null: anywhere). */
export interface WayOutRow {
  readonly where: string;
  readonly command: string;
  readonly leadsTo: readonly string[] | null;
}

const ticked = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');

/**
 * Reads the table the docs show people, so the model suite checks the code against the words: a
 * command cell is `handoff …` or `(wait)`; a destination cell names situations in backticks, or
 * says `(any)` when the command leaves the workspace where it was.
 */
export function readWaysOut(root: string): WayOutRow[] {
  const text = readFileSync(join(root, 'docs', 'concepts.md'), 'utf8');
  const section = text.split(/^## Ways out$/m)[1]?.split(/^## /m)[0];
  if (section === undefined) throw new Error('docs/concepts.md has no "## Ways out" section');
  const rows: WayOutRow[] = [];
  for (const line of section.split('\n')) {
    // A table row starts with a pipe; prose in the section may hold one (`a | b`) and is not a row.
    if (!line.trimStart().startsWith('|')) continue;
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    if (cells.length !== 3) throw new Error(`docs/concepts.md, Ways out: a table row has ${cells.length} cells, not 3: "${line}"`);
    if (cells[0] === 'where' || /^-+$/.test(cells[0] ?? '')) continue;
    const [where, command, to] = cells as [string, string, string];
    const from = ticked(where)[0];
    const verb = command === '(wait)' ? '(wait)' : ticked(command)[0];
    if (from === undefined || verb === undefined) throw new Error(`docs/concepts.md, Ways out: cannot read the row "${line}"`);
    rows.push({ where: from, command: verb, leadsTo: /\(any\)/.test(to) ? null : ticked(to) });
  }
  if (rows.length === 0) throw new Error('docs/concepts.md, Ways out: the table is empty');
  return rows;
}

/** The table's command for a step of the status's `next`. */
export const tableCommand = (verb: string): string => (verb === 'wait' ? '(wait)' : `handoff ${verb}`);

export const rowKey = (row: WayOutRow): string => `${row.where}|${row.command}`;

/**
 * Rows only a lease travelling through a git remote reaches: the model suite has one daemon and no
 * remote, so test/fault/travelling-liveness.fault.ts walks them (and fails when it did not). Listed by
 * name, never skipped silently: a row here that the table no longer has fails the model suite.
 */
export const TRAVELLING_SUITE = 'test/fault/travelling-liveness.fault.ts';
export const TRAVELLING_ROWS: readonly string[] = [
  // The holder works on another machine; the source's checkout follows the lease through the remote.
  'TAKEOVER (held)|(wait)',
];

/**
 * Rows no suite walks yet, named so that nobody believes otherwise: the travelling suite's histories
 * never leave the receiver's checkout in RETURN_HANDOFF_READY (after its return the walk finds it home),
 * so the wait for a primary on another machine is untested there. Both suites print this list.
 */
export const UNWALKED_ROWS: readonly string[] = [
  'RETURN_HANDOFF_READY|(wait)',
  // The holder's withdrawal of its return when the primary's machine is gone: the walker loses only B, never A,
  // so it never takes this second step; test/integration/travelling-return-withdraw.test.ts covers it.
  'RETURN_HANDOFF_READY|handoff cancel',
];
