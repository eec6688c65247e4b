import { splitJsonObjects } from '../../adapters/telemetry/json-stream.js';
import type { IngestReport } from '../../protocol/index.js';

export interface LineBatches {
  /** Runs of whole lines, each within the budget once JSON-encoded. */
  readonly batches: string[];
  /** 1-based numbers of lines that alone exceed the budget and were left out. */
  readonly oversized: number[];
  /** The file's line number of each batch's first line, so a batch's line numbers map back to the file. */
  readonly firstLines: number[];
}

/**
 * Cuts JSONL text into payloads of whole lines whose JSON-string form stays within `budget` bytes,
 * so each fits the daemon's body limit. A line too long on its own is a tool output in practice
 * (telemetry lines are small): it is left out and named rather than failing the whole file.
 */
export function batchLines(text: string, budget: number): LineBatches {
  const batches: string[] = [];
  const oversized: number[] = [];
  const firstLines: number[] = [];
  let current = '';
  let size = 0;
  text.split(/(?<=\n)/).forEach((line, index) => {
    // The escaped size: quotes, backslashes and control characters grow inside a JSON string.
    const cost = Buffer.byteLength(JSON.stringify(line)) - 2;
    if (cost > budget) {
      oversized.push(index + 1);
      return;
    }
    if (size + cost > budget) {
      batches.push(current);
      current = '';
      size = 0;
    }
    if (current === '') firstLines.push(index + 1);
    current += line;
    size += cost;
  });
  if (current !== '') batches.push(current);
  return { batches, oversized, firstLines };
}

/** The size of text once inside a JSON string: quotes, backslashes and control characters grow. */
const escapedBytes = (text: string): number => Buffer.byteLength(JSON.stringify(text)) - 2;
const newlines = (text: string): number => text.split('\n').length - 1;

/**
 * Cuts a stream of JSON records in any layout (Gemini CLI's telemetry outfile: one
 * `JSON.stringify(record, null, 2)` after another, many lines each) into payloads of whole records
 * within `budget` once JSON-encoded. Each payload is the file's own text from where the previous one
 * ended, so a stray line between records still reaches the adapter and is named at its file line.
 * A record too long on its own (Gemini's inference details repeat the whole system prompt) is left out
 * and named by its first line; text after the last whole record is a record still being written.
 */
export function batchRecords(text: string, budget: number): LineBatches {
  const batches: string[] = [];
  const oversized: number[] = [];
  const firstLines: number[] = [];
  let batchStart = 0;
  let batchLine = 1;
  let cursor = 0;
  let cursorLine = 1;
  let size = 0;
  const close = (end: number) => {
    if (text.slice(batchStart, end).includes('{')) {
      batches.push(text.slice(batchStart, end));
      firstLines.push(batchLine);
    }
  };
  const restartAt = (offset: number, line: number) => {
    batchStart = offset;
    batchLine = line;
    size = 0;
  };
  for (const value of splitJsonObjects(text).values) {
    const end = value.start + value.text.length;
    const segment = text.slice(cursor, end);
    if (escapedBytes(value.text) > budget) {
      close(value.start);
      oversized.push(value.line);
      cursor = end;
      cursorLine += newlines(segment);
      restartAt(cursor, cursorLine);
      continue;
    }
    const cost = escapedBytes(segment);
    if (size > 0 && size + cost > budget) {
      close(cursor);
      restartAt(cursor, cursorLine);
    }
    size += cost;
    cursor = end;
    cursorLine += newlines(segment);
  }
  // Stray lines after the last record are named when they fit; a record still being written waits anyway.
  close(size + escapedBytes(text.slice(cursor)) <= budget ? text.length : cursor);
  return { batches, oversized, firstLines };
}

export type MergedReport = IngestReport & { readonly chunks: number; readonly oversized_lines: number[] };

/** Line numbers of later chunks counted from the start of the file, as an editor shows them. */
function skippedAcross(reports: readonly IngestReport[], firstLines: readonly number[]): IngestReport['skipped_lines'] {
  return reports.flatMap((r, index) => r.skipped_lines.map((s) => ({ ...s, line: s.line + (firstLines[index] ?? 1) - 1 })));
}

/** One report for a file sent in chunks: every chunk's records in order, the last chunk's state. */
export function mergeReports(reports: readonly IngestReport[], oversized: number[], firstLines: readonly number[] = []): MergedReport {
  const [first] = reports;
  const last = reports[reports.length - 1];
  if (first === undefined || last === undefined) throw new Error('mergeReports needs at least one report');
  const recorded = reports.flatMap((r) => r.recorded);
  const unchanged = reports.flatMap((r) => r.unchanged);
  const known = new Set([...recorded, ...unchanged].map((r) => r.metric));
  // A metric unknown in one chunk but reported in another is not unknown for the file.
  const unknown = new Map(
    reports
      .flatMap((r) => r.unknown)
      .filter((u) => !known.has(u.metric))
      .map((u) => [u.metric, u]),
  );
  return {
    ...last,
    route: first.route,
    recorded,
    unchanged,
    not_credible: reports.flatMap((r) => r.not_credible),
    unknown: [...unknown.values()],
    warnings: reports.flatMap((r) => r.warnings),
    events: reports.flatMap((r) => r.events),
    skipped_lines: skippedAcross(reports, firstLines),
    chunks: reports.length,
    oversized_lines: oversized,
  };
}
