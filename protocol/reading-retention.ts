import type { Reading } from '../schemas/telemetry.schema.js';
import { credibility, type PressurePolicy } from './pressure-policy.js';

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
  const newest = new Map<string, number>();
  for (const reading of Object.values(readings)) {
    const at = Date.parse(reading.observed_at);
    const key = sourceMetric(reading);
    // Stryker disable next-line EqualityOperator: on a tie the same instant is set again
    if (at > (newest.get(key) ?? -Infinity)) newest.set(key, at);
  }
  const kept = Object.entries(readings).filter(([, reading]) => {
    const verdict = credibility(reading, nowMs, policy);
    if (verdict.credible || verdict.reason === 'observed_in_future') return true;
    if (verdict.reason === 'window_reset_passed' || verdict.reason === 'unknown_source') return false;
    // Stryker disable next-line UnaryOperator: a null percent is 'unknown_percent', refused just before; `??` only narrows the type
    if (verdict.reason === 'unknown_percent' || (reading.used_percent ?? -Infinity) < relaxLine) return false;
    // Stryker disable next-line UnaryOperator: the loop above put every reading's key in `newest`; `??` only narrows the type
    return Date.parse(reading.observed_at) >= (newest.get(sourceMetric(reading)) ?? -Infinity);
  });
  // Stryker disable next-line EqualityOperator: at exactly the bound, sorting and cutting to it keeps the same readings
  if (kept.length > MAX_LIVE_READINGS) {
    kept.sort(([, a], [, b]) => Date.parse(b.observed_at) - Date.parse(a.observed_at));
    kept.length = MAX_LIVE_READINGS;
  }
  return Object.fromEntries(kept);
}
