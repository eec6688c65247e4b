type Op = { readonly kind: ' ' | '-' | '+'; readonly text: string };

const CONTEXT = 3;

/**
 * Past this many changed lines the middle is shown as removed then added, whole: an install changes
 * a few dozen lines, and a bound keeps the diff linear in the size of the file whatever it holds.
 */
const MAX_EDIT_DISTANCE = 1000;

function splitLines(text: string | null): string[] {
  if (text === null || text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * The shortest edit script of two line lists (Myers, O((N + M) · D)): an install inserts or replaces
 * a few lines in a file of any size, so D is small. null when D passes the bound.
 */
function myers(x: readonly string[], y: readonly string[]): Op[] | null {
  const n = x.length;
  const m = y.length;
  const limit = Math.min(n + m, MAX_EDIT_DISTANCE);
  // trace[d][k + d]: the furthest x reached on diagonal k after d edits.
  const trace: Int32Array[] = [];
  let previous = new Int32Array(1);
  for (let d = 0; d <= limit; d += 1) {
    const v = new Int32Array(2 * d + 1);
    const before = (k: number): number => previous[k + d - 1] ?? 0;
    for (let k = -d; k <= d; k += 2) {
      let i = d === 0 ? 0 : k === -d || (k !== d && before(k - 1) < before(k + 1)) ? before(k + 1) : before(k - 1) + 1;
      let j = i - k;
      while (i < n && j < m && x[i] === y[j]) {
        i += 1;
        j += 1;
      }
      v[k + d] = i;
      if (i >= n && j >= m) {
        trace.push(v);
        return backtrack(x, y, trace);
      }
    }
    trace.push(v);
    previous = v;
  }
  return null;
}

function backtrack(x: readonly string[], y: readonly string[], trace: readonly Int32Array[]): Op[] {
  const ops: Op[] = [];
  let i = x.length;
  let j = y.length;
  for (let d = trace.length - 1; d > 0; d -= 1) {
    const v = trace[d - 1] ?? new Int32Array(0);
    const at = (k: number): number => v[k + d - 1] ?? 0;
    const k = i - j;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevI = at(prevK);
    const prevJ = prevI - prevK;
    while (i > prevI + (down ? 0 : 1) && j > prevJ + (down ? 1 : 0)) {
      i -= 1;
      j -= 1;
      ops.push({ kind: ' ', text: x[i] ?? '' });
    }
    if (down) {
      j -= 1;
      ops.push({ kind: '+', text: y[j] ?? '' });
    } else {
      i -= 1;
      ops.push({ kind: '-', text: x[i] ?? '' });
    }
  }
  while (i > 0 && j > 0) {
    i -= 1;
    j -= 1;
    ops.push({ kind: ' ', text: x[i] ?? '' });
  }
  return ops.reverse();
}

/** Removals before additions within each run of changes, as diff -u prints them. */
function grouped(ops: readonly Op[]): Op[] {
  const out: Op[] = [];
  let removed: Op[] = [];
  let added: Op[] = [];
  for (const op of ops) {
    if (op.kind === '-') removed.push(op);
    else if (op.kind === '+') added.push(op);
    else {
      out.push(...removed, ...added, op);
      removed = [];
      added = [];
    }
  }
  return [...out, ...removed, ...added];
}

function diffOps(a: readonly string[], b: readonly string[]): Op[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail += 1;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  const middle = myers(x, y) ?? [...x.map((text): Op => ({ kind: '-', text })), ...y.map((text): Op => ({ kind: '+', text }))];
  const same = (text: string): Op => ({ kind: ' ', text });
  return [...a.slice(0, head).map(same), ...grouped(middle), ...a.slice(a.length - tail).map(same)];
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
  // Line numbers before each op, counted once: the hunks need them at their starts.
  const oldAt = new Int32Array(ops.length + 1);
  const newAt = new Int32Array(ops.length + 1);
  ops.forEach((op, index) => {
    oldAt[index + 1] = (oldAt[index] ?? 0) + (op.kind === '+' ? 0 : 1);
    newAt[index + 1] = (newAt[index] ?? 0) + (op.kind === '-' ? 0 : 1);
  });
  for (const [start, end] of hunkRanges(changed, ops.length)) {
    const oldStart = oldAt[start] ?? 0;
    const newStart = newAt[start] ?? 0;
    const oldCount = (oldAt[end] ?? 0) - oldStart;
    const newCount = (newAt[end] ?? 0) - newStart;
    out.push(`@@ -${oldCount === 0 ? oldStart : oldStart + 1},${oldCount} +${newCount === 0 ? newStart : newStart + 1},${newCount} @@`);
    for (const op of ops.slice(start, end)) out.push(`${op.kind}${op.text}`);
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
