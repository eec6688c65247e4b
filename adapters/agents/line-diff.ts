type Op = { readonly kind: ' ' | '-' | '+'; readonly text: string };

const CONTEXT = 3;

function splitLines(text: string | null): string[] {
  if (text === null || text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Longest common subsequence over the lines between a shared prefix and suffix; config files are small. */
function diffOps(a: readonly string[], b: readonly string[]): Op[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail += 1;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  // lcs[i * width + j]: length of the LCS of x[i..] and y[j..], flat so lookups need no guards.
  const width = y.length + 1;
  const lcs = new Int32Array((x.length + 1) * width);
  const at = (i: number, j: number): number => lcs[i * width + j] ?? 0;
  for (let i = x.length - 1; i >= 0; i -= 1) {
    for (let j = y.length - 1; j >= 0; j -= 1) {
      lcs[i * width + j] = x[i] === y[j] ? at(i + 1, j + 1) + 1 : Math.max(at(i + 1, j), at(i, j + 1));
    }
  }
  const middle: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    const left = x[i];
    const right = y[j];
    if (left !== undefined && left === right) {
      middle.push({ kind: ' ', text: left });
      i += 1;
      j += 1;
    } else if (left !== undefined && (right === undefined || at(i + 1, j) >= at(i, j + 1))) {
      // Removals before additions, as diff -u prints them.
      middle.push({ kind: '-', text: left });
      i += 1;
    } else {
      middle.push({ kind: '+', text: right ?? '' });
      j += 1;
    }
  }
  const same = (text: string): Op => ({ kind: ' ', text });
  return [...a.slice(0, head).map(same), ...middle, ...a.slice(a.length - tail).map(same)];
}

/**
 * A unified diff (`diff -u` style, three lines of context) of two versions of one file; '' when they
 * are equal. `before` null means the file does not exist yet.
 */
export function unifiedDiff(path: string, before: string | null, after: string): string {
  const ops = diffOps(splitLines(before), splitLines(after));
  const changed = ops.flatMap((op, index) => (op.kind === ' ' ? [] : [index]));
  if (changed.length === 0) return '';
  const out = [`--- ${before === null ? '/dev/null' : path}`, `+++ ${path}`];
  for (const [start, end] of hunkRanges(changed, ops.length)) {
    const hunk = ops.slice(start, end);
    const skipped = ops.slice(0, start);
    const oldStart = skipped.filter((op) => op.kind !== '+').length;
    const newStart = skipped.filter((op) => op.kind !== '-').length;
    const oldCount = hunk.filter((op) => op.kind !== '+').length;
    const newCount = hunk.filter((op) => op.kind !== '-').length;
    out.push(`@@ -${oldCount === 0 ? oldStart : oldStart + 1},${oldCount} +${newCount === 0 ? newStart : newStart + 1},${newCount} @@`);
    for (const op of hunk) out.push(`${op.kind}${op.text}`);
  }
  return `${out.join('\n')}\n`;
}

/** [start, end) op ranges around the changed ops; changes closer than twice the context share one. */
function hunkRanges(changed: readonly number[], total: number): [number, number][] {
  const ranges: [number, number][] = [];
  for (const index of changed) {
    const start = Math.max(0, index - CONTEXT);
    const end = Math.min(total, index + CONTEXT + 1);
    const last = ranges[ranges.length - 1];
    if (last !== undefined && start <= last[1]) last[1] = end;
    else ranges.push([start, end]);
  }
  return ranges;
}
