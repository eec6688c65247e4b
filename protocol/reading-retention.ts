import type { Reading } from '../schemas/telemetry.schema.js';
import { credibility, observedMs, type PressurePolicy } from './pressure-policy.js';

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
 */
export function retainReadings(readings: Readonly<Record<string, Reading>>, nowMs: number, policy: PressurePolicy): Record<string, Reading> {
  const relaxLine = policy.prepare_percent - policy.hysteresis_percent;
  // This runs for every reading over every live one: it allocates little (a reading allocated ~40 kB
  // here with 64 live readings, a young-generation GC every ~10 readings: docs/performance/daemon.md),
  // looks each time up once, and builds the newest-per-window map only when a stale reading asks.
  let newest: Map<string, number> | null = null;
  const newestOf = (window: string): number => {
    if (newest === null) {
      newest = new Map();
      for (const key in readings) {
        const reading = readings[key];
        if (reading === undefined) continue;
        const at = observedMs(reading);
        // Stryker disable next-line EqualityOperator: on a tie the same instant is set again
        if (at > (newest.get(sourceMetric(reading)) ?? -Infinity)) newest.set(sourceMetric(reading), at);
      }
    }
    // Stryker disable next-line UnaryOperator: the loop above put every live reading's window in `newest`; `??` only narrows the type
    return newest.get(window) ?? -Infinity;
  };
  const kept: [string, Reading][] = [];
  for (const key in readings) {
    const reading = readings[key];
    if (reading === undefined) continue;
    const verdict = credibility(reading, nowMs, policy);
    if (verdict.credible || verdict.reason === 'observed_in_future') kept.push([key, reading]);
    else if (verdict.reason === 'window_reset_passed' || verdict.reason === 'unknown_source') continue;
    // Stryker disable next-line UnaryOperator: a null percent is 'unknown_percent', refused just before; `??` only narrows the type
    else if (verdict.reason === 'unknown_percent' || (reading.used_percent ?? -Infinity) < relaxLine) continue;
    else if (observedMs(reading) >= newestOf(sourceMetric(reading))) kept.push([key, reading]);
  }
  // Stryker disable next-line EqualityOperator: at exactly the bound, sorting and cutting to it keeps the same readings
  if (kept.length > MAX_LIVE_READINGS) {
    kept.sort(([, a], [, b]) => observedMs(b) - observedMs(a));
    kept.length = MAX_LIVE_READINGS;
  }
  return Object.fromEntries(kept);
}
