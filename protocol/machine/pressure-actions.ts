import { assertEvent } from 'xstate';
import { credibility, readingKey } from '../pressure-policy.js';
import { retainReadings } from '../reading-retention.js';
import { newCycle } from './cycle-rules.js';
import { done } from './outcome.js';
import { assessNow, telemetryTrigger } from './pressure-now.js';
import { update } from './update.js';

/** Kept for status and the manifest; older warnings live in the journal. */
const WARNINGS_KEPT = 20;

/** What the agent's telemetry and the operator say about pressure, and the cycles it starts. */
export const pressureActions = {
  recordReading: update(({ context, event }) => {
    assertEvent(event, 'READING');
    const reading = event.reading;
    const verdict = credibility(reading, context.now, context.policy);
    if (!verdict.credible) {
      return { outcome: { ...done('reading_not_credible', { reason: verdict.reason }, false), message: `${verdict.message}; nothing changed` } };
    }
    const key = readingKey(reading);
    const previous = context.readings[key];
    if (previous !== undefined && Date.parse(previous.observed_at) > Date.parse(reading.observed_at)) {
      return {
        outcome: {
          ...done('reading_not_credible', { reason: 'superseded' }, false),
          message: `a newer ${reading.metric} reading from ${reading.source} is already recorded; nothing changed`,
        },
      };
    }
    const readings = retainReadings(context.readings, context.now, context.policy, { key, reading });
    return { readings, outcome: done('reading_recorded', { key }) };
  }),
  recordWarning: update(({ context, event }) => {
    assertEvent(event, 'WARNING');
    return { warnings: [...context.warnings, event.warning].slice(-WARNINGS_KEPT), outcome: done('warning_recorded') };
  }),
  startTelemetryCycle: update(({ context }) => ({
    cycle: newCycle(context, telemetryTrigger(context, context.policy.evacuate_percent)),
    blocked: null,
  })),
  startWarningCycle: update(({ context, event }) => {
    assertEvent(event, 'WARNING');
    const w = event.warning;
    return { cycle: newCycle(context, { kind: 'provider_warning', reason: `${w.kind} from ${w.source}: ${w.text}`, readings: [] }), blocked: null };
  }),
  startManualCycle: update(({ context, event }) => {
    assertEvent(event, 'NOW');
    return {
      cycle: newCycle(context, { kind: 'manual', reason: event.reason ?? 'handoff now', readings: assessNow(context).pressing }, !event.wait),
      blocked: null,
      outcome: done('evacuation_started'),
    };
  }),
};
