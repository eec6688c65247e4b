import type { PressurePolicy } from '../schemas/config.schema.js';
import { SOURCES, type Reading } from '../schemas/telemetry.schema.js';

export type { PressurePolicy } from '../schemas/config.schema.js';

export type NotCredibleReason = 'unknown_source' | 'unknown_percent' | 'stale_observation' | 'observed_in_future' | 'window_reset_passed';

export type Credibility = { credible: true } | { credible: false; reason: NotCredibleReason; message: string };

/** A clock ahead of ours by more than this is not a reading we can place in time. */
const FUTURE_SKEW_MS = 5 * 60_000;

const KNOWN_SOURCES: ReadonlySet<string> = new Set(SOURCES);

/** One answer for every credible reading: judged for each live reading at every step, it allocates nothing. */
const CREDIBLE: Credibility = Object.freeze({ credible: true });

/** When a reading was observed, in ms since the epoch (NaN for a time that does not parse, as Date.parse). */
// Not memoised: a module-level cache is the mutable state CONTRIBUTING.md keeps out of the pure core. A
// memo keyed by the reading took a 64-reading step from ~80–113 to ~40–57 µs (docs/performance/daemon.md).
export const observedMs = (reading: Reading): number => Date.parse(reading.observed_at);

/**
 * docs/concepts.md (Readings and pressure): a credible reading comes from a named adapter, has a
 * numeric percent, was observed within the freshness window, and its window (when it has one) has
 * not reset yet.
 */
export function credibility(reading: Reading, nowMs: number, policy: PressurePolicy): Credibility {
  return credibilityAt(reading, observedMs(reading), nowMs, policy);
}

/** `credibility` for a reading whose observation time the caller already parsed (`observedMs`). */
export function credibilityAt(reading: Reading, observed: number, nowMs: number, policy: PressurePolicy): Credibility {
  if (!KNOWN_SOURCES.has(reading.source)) {
    return { credible: false, reason: 'unknown_source', message: `source '${reading.source}' is not a named adapter` };
  }
  if (reading.used_percent === null || !Number.isFinite(reading.used_percent)) {
    return { credible: false, reason: 'unknown_percent', message: `${reading.metric} percent is unknown` };
  }
  if (observed - nowMs > FUTURE_SKEW_MS) {
    return { credible: false, reason: 'observed_in_future', message: `observed_at ${reading.observed_at} lies in the future` };
  }
  if (nowMs - observed > policy.freshness_seconds * 1000) {
    return {
      credible: false,
      reason: 'stale_observation',
      message: `observed at ${reading.observed_at}, older than the ${policy.freshness_seconds} s freshness window`,
    };
  }
  if (reading.resets_at !== null && reading.resets_at * 1000 <= nowMs) {
    return {
      credible: false,
      reason: 'window_reset_passed',
      message: `its window reset at ${new Date(reading.resets_at * 1000).toISOString()}, which has passed`,
    };
  }
  return CREDIBLE;
}

/**
 * One slot per reporter and metric: two sessions in one repository each have their own context window.
 * A Codex per-model limit family gets its own slot, so it never overwrites the account's window.
 */
export function readingKey(reading: Reading): string {
  const base = `${reading.source}/${reading.metric}/${reading.executor ?? '-'}`;
  return reading.limit === undefined ? base : `${base}/${reading.limit.id}`;
}

/**
 * Whether a credible reading moves the state: account-wide readings always do; a per-model limit
 * family only when `count_limit_families` names it. The others are kept and shown, never counted.
 */
export function countsForPressure(reading: Reading, policy: PressurePolicy): boolean {
  return reading.limit === undefined || (policy.count_limit_families ?? []).includes(reading.limit.id);
}

/** Why a per-model family does not count, in the words `handoff status` shows. */
export function uncountedFamilyMessage(reading: Reading): string {
  const limit = reading.limit;
  if (limit === undefined) return '';
  const name = limit.name === null ? limit.id : `${limit.name} (${limit.id})`;
  return `per-model limit family ${name}: shown, not counted (pressure.count_limit_families)`;
}

export interface Assessment {
  /** The worst credible reading, or null when pressure is unknown. */
  readonly worst: Reading | null;
  readonly level: 'none' | 'prepare' | 'evacuate';
  /** Readings at or above the PREPARE line: the ones that justify staying in (or entering) PREPARE. */
  readonly pressing: readonly Reading[];
  /**
   * PREPARE may fall back to NORMAL: some reading is credible, every credible one is below
   * prepare − hysteresis, and no reading that was above that line has merely gone silent.
   */
  readonly canRelax: boolean;
}

export function assess(readings: readonly Reading[], nowMs: number, policy: PressurePolicy): Assessment {
  const relaxLine = policy.prepare_percent - policy.hysteresis_percent;
  let worst: Reading | null = null;
  let anyCredible = false;
  let blocked = false;
  const pressing: Reading[] = [];
  for (const reading of readings) {
    if (!countsForPressure(reading, policy)) continue;
    const verdict = credibility(reading, nowMs, policy);
    const percent = reading.used_percent;
    if (verdict.credible && percent !== null) {
      anyCredible = true;
      if (worst === null || percent > (worst.used_percent ?? -Infinity)) worst = reading;
      if (percent >= policy.prepare_percent) pressing.push(reading);
      if (percent >= relaxLine) blocked = true;
    } else if (percent !== null && percent >= relaxLine && verdict.credible === false && verdict.reason !== 'window_reset_passed') {
      // Telemetry going quiet is not evidence that pressure went away; a window the provider said
      // would reset, and has, is.
      blocked = true;
    }
  }
  return { worst, level: levelOf(worst?.used_percent ?? null, policy), pressing, canRelax: anyCredible && !blocked };
}

/**
 * `assess(...).level` alone, for the machine's guards, which ask it at every step: a reading below
 * the PREPARE line cannot raise the level, so only the ones at or above it are judged (parsing each
 * one's time was ~128 Date.parse a step for two guards over 64 live readings: docs/performance/daemon.md).
 */
export function pressureLevel(readings: readonly Reading[], nowMs: number, policy: PressurePolicy): Assessment['level'] {
  let top: number | null = null;
  for (const reading of readings) {
    const percent = reading.used_percent;
    if (percent === null || percent < policy.prepare_percent || (top !== null && percent <= top)) continue;
    if (countsForPressure(reading, policy) && credibility(reading, nowMs, policy).credible) top = percent;
  }
  return levelOf(top, policy);
}

const levelOf = (top: number | null, policy: PressurePolicy): Assessment['level'] =>
  top === null ? 'none' : top >= policy.evacuate_percent ? 'evacuate' : top >= policy.prepare_percent ? 'prepare' : 'none';

export function describeReading(reading: Reading): string {
  const percent = reading.used_percent === null ? 'unknown' : `${reading.used_percent} %`;
  const family = reading.limit === undefined ? '' : ` (${reading.limit.name ?? reading.limit.id})`;
  return `${reading.metric}${family} ${percent} from ${reading.source}`;
}

export function samePolicy(a: PressurePolicy, b: PressurePolicy): boolean {
  return (
    a.prepare_percent === b.prepare_percent &&
    a.evacuate_percent === b.evacuate_percent &&
    a.hysteresis_percent === b.hysteresis_percent &&
    a.freshness_seconds === b.freshness_seconds &&
    (a.count_limit_families ?? []).join('\n') === (b.count_limit_families ?? []).join('\n')
  );
}
