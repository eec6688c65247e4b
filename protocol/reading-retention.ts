import type { Reading } from '../schemas/telemetry.schema.js';
import { credibility, observedMs, type PressurePolicy } from './pressure-policy.js';

/**
 * The hard bound on readings a workspace keeps live, whatever the agents send: enough for every
 * source × metric × a few dozen sessions reporting at once. Past it the oldest observations go first.
 */
export const MAX_LIVE_READINGS = 64;

/** A live reading with its key, its observation time (ms) and its window. */
type Entry = [key: string, reading: Reading, at: number, window: string];

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
  // Each time looked up once: this runs for every reading, and sorting 65 live readings by parsing in
  // the comparator took ~800 Date.parse calls a reading (docs/performance/daemon.md).
  const all = Object.entries(readings).map(([key, reading]): Entry => [key, reading, observedMs(reading), sourceMetric(reading)]);
  const newest = new Map<string, number>();
  for (const [, , at, window] of all) {
    if (at > (newest.get(window) ?? -Infinity)) newest.set(window, at);
  }
  const kept = all.filter(([, reading, at, window]) => {
    const verdict = credibility(reading, nowMs, policy);
    if (verdict.credible || verdict.reason === 'observed_in_future') return true;
    if (verdict.reason === 'window_reset_passed' || verdict.reason === 'unknown_source') return false;
    if (verdict.reason === 'unknown_percent' || (reading.used_percent ?? -Infinity) < relaxLine) return false;
    return at >= (newest.get(window) ?? -Infinity);
  });
  if (kept.length > MAX_LIVE_READINGS) {
    kept.sort(([, , a], [, , b]) => b - a);
    kept.length = MAX_LIVE_READINGS;
  }
  return Object.fromEntries(kept.map(([key, reading]) => [key, reading]));
}
