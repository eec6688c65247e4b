import type { Reading } from '../schemas/telemetry.schema.js';
import { credibilityAt, observedMs, type PressurePolicy } from './pressure-policy.js';

/**
 * The hard bound on readings a workspace keeps live, whatever the agents send: enough for every
 * source × metric × a few dozen sessions reporting at once. Past it the oldest observations go first.
 */
export const MAX_LIVE_READINGS = 64;

/** One window: a source's metric, and for a per-model limit family, that family's own. */
const sourceMetric = (reading: Reading): string => `${reading.source}/${reading.metric}${reading.limit ? `/${reading.limit.id}` : ''}`;

/**
 * Which readings stay in the live state: those that can still count. The live state then grows with
 * the sessions reporting now, never with every session ever seen (each new agent session brings its
 * own keys). Dropped:
 * - a reading whose window has reset: it can neither count nor hold PREPARE;
 * - a stale reading below the relax line: it can neither count nor hold PREPARE;
 * - a stale reading when a newer one of the same source and metric exists from another session: the
 *   newer report speaks for that agent now (a quota window is the account's, one window for all its
 *   sessions; a silent session's context window is superseded once its agent reports again);
 * - past MAX_LIVE_READINGS, the oldest observations.
 * A stale high reading with nothing newer stays: telemetry going quiet is not evidence of relief.
 * `put`: a reading recorded now, judged as if it were in `readings` under its key (a new key last).
 */
export function retainReadings(
  readings: Readonly<Record<string, Reading>>,
  nowMs: number,
  policy: PressurePolicy,
  put?: { readonly key: string; readonly reading: Reading },
): Record<string, Reading> {
  const relaxLine = policy.prepare_percent - policy.hysteresis_percent;
  // This runs for every reading over every live one, so each observation time is parsed once here:
  // the cut past MAX_LIVE_READINGS sorted by parsing two times per comparison, ~800 Date.parse a step
  // with 400 sessions reporting (docs/performance/daemon.md). The newest-per-window map is built only
  // when a stale reading asks.
  const live: LiveReading[] = [];
  for (const key in readings) {
    const reading = key === put?.key ? put.reading : readings[key];
    if (reading !== undefined) live.push({ key, reading, at: observedMs(reading) });
  }
  // `put` counts as `{ ...readings, [put.key]: put.reading }` would, without building that object first.
  if (put !== undefined && !Object.hasOwn(readings, put.key)) live.push({ ...put, at: observedMs(put.reading) });
  let newest: Map<string, number> | null = null;
  const newestOf = (window: string): number => {
    if (newest === null) {
      newest = new Map();
      for (const { reading, at } of live) {
        // Stryker disable next-line EqualityOperator: on a tie the same instant is set again
        if (at > (newest.get(sourceMetric(reading)) ?? -Infinity)) newest.set(sourceMetric(reading), at);
      }
    }
    // Stryker disable next-line UnaryOperator: the loop above put every live reading's window in `newest`; `??` only narrows the type
    return newest.get(window) ?? -Infinity;
  };
  const kept: LiveReading[] = [];
  for (const entry of live) {
    const { reading, at } = entry;
    const verdict = credibilityAt(reading, at, nowMs, policy);
    if (verdict.credible || verdict.reason === 'observed_in_future') kept.push(entry);
    else if (verdict.reason === 'window_reset_passed' || verdict.reason === 'unknown_source') continue;
    // Stryker disable next-line UnaryOperator: a null percent is 'unknown_percent', refused just before; `??` only narrows the type
    else if (verdict.reason === 'unknown_percent' || (reading.used_percent ?? -Infinity) < relaxLine) continue;
    else if (at >= newestOf(sourceMetric(reading))) kept.push(entry);
  }
  // Stryker disable next-line EqualityOperator: at exactly the bound, sorting and cutting to it keeps the same readings
  if (kept.length > MAX_LIVE_READINGS) {
    kept.sort((a, b) => b.at - a.at);
    kept.length = MAX_LIVE_READINGS;
  }
  // A dictionary from the start: sessions report in any order, so a plain object built key by key
  // (or spread) got a hidden class of its own at every step, ~2× the step's CPU (docs/performance/daemon.md).
  const result: Record<string, Reading> = Object.create(null) as Record<string, Reading>;
  for (const { key, reading } of kept) result[key] = reading;
  return result;
}

/** A live reading with its observation time parsed once. */
interface LiveReading {
  readonly key: string;
  readonly reading: Reading;
  readonly at: number;
}
