import { formatDuration, formatRelative } from '../../../protocol/time-words.js';

/** What every renderer needs besides the data: the reader's clock and how wide the terminal is. */
export interface View {
  readonly nowMs: number;
  /** The terminal's width; 80 when stdout is not a terminal (a pipe, a file). */
  readonly columns: number;
}

export const processView = (stream: { columns?: number } = process.stdout): View => ({
  nowMs: Date.now(),
  columns: stream.columns !== undefined && stream.columns > 20 ? stream.columns : 80,
});

/** "3 min ago" for a past instant, "in 2 h" for a future one; the ISO text itself when it does not parse. */
export function relativeTime(iso: string | null | undefined, nowMs: number): string {
  if (iso === null || iso === undefined) return 'unknown';
  const at = Date.parse(iso);
  if (!Number.isFinite(at)) return iso;
  return formatRelative((at - nowMs) / 1000);
}

export { formatDuration };

/** The time a cycle id names (`20261129T081500Z-…` is UTC), as ISO text, or null for any other text. */
export function cycleTime(cycle: string): string | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-/.exec(cycle);
  return m === null ? null : `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`;
}

export const shortSha = (sha: string | null | undefined): string => (sha === null || sha === undefined ? 'none' : sha.slice(0, 12));

/** Columns padded to their widest cell; the last column is not padded, so no line ends in spaces. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  return all.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '));
}

/** Visible width: SGR colour sequences take no room. */
const SGR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');
const visible = (text: string): number => text.replace(SGR, '').length;

/**
 * One logical line folded at word boundaries to `width`; continuation lines start with `indent`
 * spaces, so a labelled field (`next      …`) keeps its column. A word longer than a line (a path)
 * stays whole: cutting it would make it unusable to copy.
 */
export function wrap(line: string, width: number, indent: number): string[] {
  if (visible(line) <= width) return [line];
  const lead = /^ */.exec(line)?.[0] ?? '';
  const out: string[] = [];
  let current = lead;
  for (const word of line.slice(lead.length).split(' ')) {
    const fresh = current.trim() === '';
    const candidate = fresh ? `${current}${word}` : `${current} ${word}`;
    if (fresh || visible(candidate) <= width) current = candidate;
    else {
      out.push(current);
      current = `${' '.repeat(indent)}${word}`;
    }
  }
  out.push(current);
  return out;
}

/**
 * Every line of a block wrapped: a labelled line (`lease     …`) continues under its value's column,
 * an indented line (a reading, a check) two spaces deeper than itself.
 */
export function wrapAll(lines: readonly string[], width: number, labelColumn = 10): string {
  return lines
    .flatMap((block) => block.split('\n'))
    .flatMap((line) => {
      const leading = /^ */.exec(line)?.[0].length ?? 0;
      return wrap(line, width, leading >= labelColumn ? leading : leading > 0 ? leading + 2 : labelColumn);
    })
    .join('\n');
}

/** A verb's human answer: what happened and what to do next, from the success Envelope's data. */
export type Renderer<D = never> = (data: D, code: string, view: View) => string;
