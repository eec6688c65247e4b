import type { Reading } from '../schemas/telemetry.schema.js';
import { credibility, readingKey } from './pressure-policy.js';
import type { Outcome, WorkspaceContext } from './workspace-machine.js';

/**
 * The answer to a reading the machine would refuse, found without running its transition (~15 % of a
 * reading's CPU, docs/performance/daemon.md): not credible at the event's time, or older than the
 * reading already kept under its key. Every state hands READING to `recordReading` (the closed stage
 * clears its cycle first, which neither rule reads), so the refusal and its words are the machine's;
 * test/unit/protocol/reading-precheck.test.ts holds the two equal over generated states and readings.
 * null: the reading may change something, and only the machine can say what.
 */
export function refusedReading(context: Pick<WorkspaceContext, 'policy' | 'readings'>, reading: Reading, at: number): Outcome | null {
  const verdict = credibility(reading, at, context.policy);
  if (!verdict.credible) return refusal(verdict.reason, `${verdict.message}; nothing changed`);
  const previous = context.readings[readingKey(reading)];
  if (previous !== undefined && Date.parse(previous.observed_at) > Date.parse(reading.observed_at)) {
    return refusal('superseded', `a newer ${reading.metric} reading from ${reading.source} is already recorded; nothing changed`);
  }
  return null;
}

function refusal(reason: string, message: string): Outcome {
  return { code: 'reading_not_credible', message, hint: null, data: { reason }, changed: false };
}
