import { createHash } from 'node:crypto';
import { METRICS } from '../../schemas/telemetry.schema.js';
import type { Metric, ProviderWarning, Reading, Source, WarningKind } from '../../schemas/telemetry.schema.js';
import type { AdapterResult, AgentEvent, PayloadRoute, UnknownMetric } from './adapter-contract.js';

/**
 * How old a provider error in an agent's log may be and still be news. Logs and rollouts keep every
 * error ever written; one from yesterday's session says nothing about now. Older ones are reported
 * as events, never as warnings.
 */
export const RECENT_ERROR_MS = 15 * 60_000;

/** Identifies the exact payload a number came from, so a reading can be traced back to its bytes. */
export function sha256Hex(raw: string): string {
  return createHash('sha256').update(raw, 'utf8').digest('hex');
}

/**
 * Unit conversion (fraction × 100, count ratio × 100) leaves binary noise such as
 * 28.999999999999996; twelve significant digits remove it without changing any reported digit.
 */
export function cleanPercent(value: number): number {
  return Number(value.toPrecision(12));
}

/** The warning schema bounds text to 1–2000 characters. */
export function warningText(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return '(no text)';
  return trimmed.length > 2000 ? `${trimmed.slice(0, 1999)}…` : trimmed;
}

const METRIC_ORDER: ReadonlyMap<Metric, number> = new Map(METRICS.map((metric, index) => [metric, index]));

function metricRank(metric: Metric): number {
  return METRIC_ORDER.get(metric) ?? METRICS.length;
}

/** Results come out in one fixed metric order so callers and tests never depend on parse order. */
export function byMetric<T extends { metric: Metric }>(items: Iterable<T>): T[] {
  return [...items].sort((a, b) => metricRank(a.metric) - metricRank(b.metric));
}

/** The fields every record cut from one payload shares. */
export interface Stamp {
  readonly source: Source;
  readonly observedAt: string;
  readonly rawSha256: string;
  readonly executor: string | null;
}

export function reading(stamp: Stamp, metric: Metric, usedPercent: number, resetsAt: number | null): Reading {
  return {
    source: stamp.source,
    metric,
    used_percent: usedPercent,
    resets_at: resetsAt,
    observed_at: stamp.observedAt,
    raw_sha256: stamp.rawSha256,
    executor: stamp.executor,
  };
}

export function warning(stamp: Stamp, kind: WarningKind, text: string, recovers: boolean | null, retryAfterSeconds: number | null): ProviderWarning {
  return {
    source: stamp.source,
    kind,
    text: warningText(text),
    recovers,
    retry_after_seconds: retryAfterSeconds,
    observed_at: stamp.observedAt,
    raw_sha256: stamp.rawSha256,
    executor: stamp.executor,
  };
}

export function agentEvent(stamp: Stamp, name: string, detail: Record<string, string | null>): AgentEvent {
  return {
    source: stamp.source,
    name,
    detail,
    observed_at: stamp.observedAt,
    raw_sha256: stamp.rawSha256,
    executor: stamp.executor,
  };
}

export const NO_ROUTE: PayloadRoute = Object.freeze({ cwd: null, session_id: null });

export function result(parts: Partial<AdapterResult>): AdapterResult {
  return {
    readings: byMetric(parts.readings ?? []),
    unknown: byMetric<UnknownMetric>(parts.unknown ?? []),
    warnings: parts.warnings ?? [],
    events: parts.events ?? [],
    route: { ...(parts.route ?? NO_ROUTE) },
    skipped: parts.skipped ?? [],
  };
}
