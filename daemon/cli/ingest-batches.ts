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
