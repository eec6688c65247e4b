import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WorkspaceContext } from '../../../protocol/index.js';
import { assessNow, reliefSinceRequest, telemetryTrigger } from '../../../protocol/machine/pressure-now.js';
import { contextAt, readingOf, T0 } from './machine-harness.js';

/** How the machine judges its own pressure: only readings observed after the last `handoff cancel` are news. */
const iso = (ms: number) => new Date(ms).toISOString();
const withReadings = (context: WorkspaceContext, ...percents: number[]): { -readonly [K in keyof WorkspaceContext]: WorkspaceContext[K] } => ({
  ...context,
  readings: Object.fromEntries(percents.map((p, i) => [`r${i}`, readingOf(p, T0 - i * 1000, { executor: `s${i}` })])),
});

describe('assessNow', () => {
  it('judges a reading only when it was observed after the last cancel', () => {
    fc.assert(
      fc.property(fc.integer({ min: -5, max: 5 }), (offset) => {
        const context = { ...withReadings(contextAt('NORMAL'), 95), cancelled_at: iso(T0 + offset * 1000) };
        expect(assessNow(context).level).toBe(offset < 0 ? 'evacuate' : 'none');
      }),
    );
  });

  it('judges every reading of a context that never recorded a cancel (a journal older than the field)', () => {
    const older = withReadings(contextAt('NORMAL'), 95);
    delete older.cancelled_at;
    expect(assessNow(older).level).toBe('evacuate');
    expect(assessNow({ ...older, cancelled_at: null }).level).toBe('evacuate');
  });
});

describe('reliefSinceRequest', () => {
  const prepare = withReadings(contextAt('PREPARE'), 60);

  it('needs no relief when PREPARE was not asked for, whether or not the journal knows the field', () => {
    const older = { ...prepare };
    delete older.prepare_requested_at;
    expect([reliefSinceRequest(prepare), reliefSinceRequest(older), reliefSinceRequest({ ...prepare, readings: {} })]).toEqual([true, true, true]);
  });

  it('after a request, sees relief only in a credible reading observed strictly after it', () => {
    fc.assert(
      fc.property(fc.integer({ min: -5, max: 5 }), (offset) => {
        const asked = { ...prepare, prepare_requested_at: iso(T0 + offset * 1000) };
        expect(reliefSinceRequest(asked)).toBe(offset < 0);
      }),
    );
    // Observed after the request but older than the freshness window: not credible now.
    const stale = { ...prepare, now: T0 + 601_000, prepare_requested_at: iso(T0 - 1000) };
    expect(reliefSinceRequest(stale)).toBe(false);
  });

  it('counts one credible reading among others', () => {
    const asked = { ...withReadings(contextAt('PREPARE'), 60, 60), prepare_requested_at: iso(T0 - 500) };
    expect(reliefSinceRequest(asked)).toBe(true);
  });

  it('ignores readings from before the last cancel', () => {
    const asked = { ...prepare, prepare_requested_at: iso(T0 - 5000), cancelled_at: iso(T0) };
    expect(reliefSinceRequest(asked)).toBe(false);
  });
});

describe('telemetryTrigger', () => {
  it('names the worst reading and keeps, as evidence, the readings at or above the line it crossed', () => {
    const context = withReadings(contextAt('PREPARE'), 95, 90, 85);
    const trigger = telemetryTrigger(context, 90);
    expect(trigger.kind).toBe('telemetry');
    expect(trigger.reason).toBe('five_hour 95 % from claude-statusline reached the 90 % line');
    expect(trigger.readings.map((r) => r.used_percent)).toEqual([95, 90]);
  });

  it('says "pressure" when there is no reading to name', () => {
    expect(telemetryTrigger(contextAt('NORMAL'), 90)).toEqual({ kind: 'telemetry', reason: 'pressure reached the 90 % line', readings: [] });
  });
});
