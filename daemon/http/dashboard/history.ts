import { byCodeUnits } from '../../../protocol/code-unit-order.js';
import { readingKey } from '../../../protocol/index.js';
import type { Reading } from '../../../schemas/index.js';

/** One recorded reading on a timeline: when it was observed and the percent (null: unknown). */
export interface HistoryPoint {
  readonly t: string;
  readonly percent: number | null;
}

export interface HistorySeries {
  readonly key: string;
  readonly source: string;
  readonly metric: string;
  readonly executor: string | null;
  /** A Codex per-model limit family, by the name Codex gives it (the account's series has none). */
  readonly limit?: string;
  readonly points: readonly HistoryPoint[];
}

export interface HistoryLimits {
  /** Points kept per source and metric (and session): the oldest go first. */
  readonly pointsPerSeries: number;
  /** Series kept per workspace: the one updated longest ago goes first. */
  readonly seriesPerWorkspace: number;
}

export const DEFAULT_HISTORY_LIMITS: HistoryLimits = { pointsPerSeries: 240, seriesPerWorkspace: 24 };

interface Series {
  readonly key: string;
  readonly reading: Pick<Reading, 'source' | 'metric' | 'executor' | 'limit'>;
  points: HistoryPoint[];
}

/**
 * The pressure timeline of each workspace. The machine keeps only the latest reading per key; the
 * dashboard keeps a bounded ring of recent ones in memory, seeded from the journal at start.
 */
export class ReadingHistory {
  private readonly workspaces = new Map<string, Map<string, Series>>();

  constructor(private readonly limits: HistoryLimits = DEFAULT_HISTORY_LIMITS) {}

  record(root: string, reading: Reading): void {
    let series = this.workspaces.get(root);
    if (series === undefined) {
      series = new Map();
      this.workspaces.set(root, series);
    }
    const key = readingKey(reading);
    let entry = series.get(key);
    if (entry === undefined) {
      entry = {
        key,
        reading: {
          source: reading.source,
          metric: reading.metric,
          executor: reading.executor,
          ...(reading.limit === undefined ? {} : { limit: reading.limit }),
        },
        points: [],
      };
    }
    // Re-inserted, so the Map's order is least recently updated first.
    series.delete(key);
    series.set(key, entry);
    const point = { t: reading.observed_at, percent: reading.used_percent };
    const last = entry.points.at(-1);
    if (last !== undefined && last.t === point.t && last.percent === point.percent) return;
    entry.points.push(point);
    if (last !== undefined && Date.parse(last.t) > Date.parse(point.t)) entry.points.sort((a, b) => Date.parse(a.t) - Date.parse(b.t));
    if (entry.points.length > this.limits.pointsPerSeries) entry.points.splice(0, entry.points.length - this.limits.pointsPerSeries);
    while (series.size > this.limits.seriesPerWorkspace) {
      const oldest = series.keys().next().value;
      if (oldest === undefined) break;
      series.delete(oldest);
    }
  }

  /**
   * From journal records: every journaled READING event, and the readings a snapshot or a coalesced
   * readings record holds, in journal order. Anything else is skipped.
   */
  seed(records: readonly unknown[]): void {
    for (const record of records) {
      const r = record as {
        kind?: unknown;
        root?: unknown;
        event?: { type?: unknown; reading?: Reading };
        readings?: unknown;
        context?: { readings?: unknown };
      } | null;
      if (typeof r?.root !== 'string') continue;
      if (r.kind === 'workspace' && r.event?.type === 'READING' && r.event.reading !== undefined) this.record(r.root, r.event.reading);
      const held = r.kind === 'readings' ? r.readings : r.kind === 'snapshot' ? r.context?.readings : undefined;
      if (typeof held === 'object' && held !== null) for (const reading of Object.values(held as Record<string, Reading>)) this.record(r.root, reading);
    }
  }

  series(root: string): HistorySeries[] {
    const series = this.workspaces.get(root);
    if (series === undefined) return [];
    return [...series.values()]
      .map((s) => ({
        key: s.key,
        source: s.reading.source,
        metric: s.reading.metric,
        executor: s.reading.executor,
        ...(s.reading.limit === undefined ? {} : { limit: s.reading.limit.name ?? s.reading.limit.id }),
        points: [...s.points],
      }))
      .sort((a, b) => byCodeUnits(a.key, b.key));
  }
}
