import type { Reading } from '../../schemas/telemetry.schema.js';
import { assess, credibility, describeReading, observedMs, pressureLevel } from '../pressure-policy.js';
import type { Trigger, WorkspaceContext } from './context.js';

/** The readings automatic moves judge by: those observed after the last `handoff cancel` (all of them without one). */
function readingList(context: WorkspaceContext): Reading[] {
  // `for…in`, not `Object.values`: over the live readings' dictionary ~1.75 against ~4.8 µs (64 readings), twice a step.
  const readings: Reading[] = [];
  // Each key holds a reading: retention builds the dictionary without a prototype (reading-retention.ts), and the
  // initial or journal-restored one is a plain object, whose prototype has no enumerable key.
  for (const key in context.readings) readings.push(context.readings[key] as Reading);
  const since = context.cancelled_at ?? null;
  if (since === null) return readings;
  const sinceMs = Date.parse(since);
  return readings.filter((r) => observedMs(r) > sinceMs);
}
/** How the machine itself judges the pressure now: the readings since the last `handoff cancel`. */
export const assessNow = (context: WorkspaceContext) => assess(readingList(context), context.now, context.policy);
/** `assessNow(context).level`, for the guards that ask only that. */
export const levelNow = (context: WorkspaceContext) => pressureLevel(readingList(context), context.now, context.policy);

/** A manual PREPARE relaxes only on a credible reading observed after the operator asked for it. */
export function reliefSinceRequest(context: WorkspaceContext): boolean {
  const since = context.prepare_requested_at ?? null;
  if (since === null) return true;
  return readingList(context).some((r) => Date.parse(r.observed_at) > Date.parse(since) && credibility(r, context.now, context.policy).credible);
}

export function telemetryTrigger(context: WorkspaceContext, line: number): Trigger {
  const { worst, pressing } = assessNow(context);
  const what = worst === null ? 'pressure' : describeReading(worst);
  return { kind: 'telemetry', reason: `${what} reached the ${line} % line`, readings: pressing.filter((r) => (r.used_percent ?? 0) >= line) };
}
