import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  assess,
  countsForPressure,
  credibility,
  describeReading,
  pressureLevel,
  readingKey,
  samePolicy,
  uncountedFamilyMessage,
} from '../../../protocol/index.js';
import type { Reading } from '../../../schemas/telemetry.schema.js';
import { POLICY, T0 } from './machine-harness.js';

const at = (ms: number) => new Date(ms).toISOString();
const reading = (fields: Partial<Reading> = {}): Reading => ({
  source: 'claude-statusline',
  metric: 'five_hour',
  used_percent: 50,
  resets_at: null,
  observed_at: at(T0),
  raw_sha256: null,
  executor: 's1',
  ...fields,
});
const family = { id: 'gpt-5-codex', name: 'GPT-5 Codex' };

describe('credibility', () => {
  const verdict = (fields: Partial<Reading>) => credibility(reading(fields), T0, POLICY);

  it('a reading from a named adapter, with a percent, fresh and in an unreset window is credible', () => {
    expect(verdict({})).toEqual({ credible: true });
    expect(verdict({ resets_at: T0 / 1000 + 1 })).toEqual({ credible: true });
  });

  it('says why a reading is not credible, naming what it saw', () => {
    expect(verdict({ source: 'guess' as never })).toEqual({ credible: false, reason: 'unknown_source', message: "source 'guess' is not a named adapter" });
    expect(verdict({ used_percent: null })).toEqual({ credible: false, reason: 'unknown_percent', message: 'five_hour percent is unknown' });
    expect(verdict({ used_percent: Number.NaN })).toMatchObject({ reason: 'unknown_percent' });
    expect(verdict({ used_percent: Number.POSITIVE_INFINITY })).toMatchObject({ reason: 'unknown_percent' });
    expect(verdict({ observed_at: at(T0 - 600_001) })).toEqual({
      credible: false,
      reason: 'stale_observation',
      message: `observed at ${at(T0 - 600_001)}, older than the 600 s freshness window`,
    });
    expect(verdict({ observed_at: at(T0 + 300_001) })).toEqual({
      credible: false,
      reason: 'observed_in_future',
      message: `observed_at ${at(T0 + 300_001)} lies in the future`,
    });
    expect(verdict({ resets_at: T0 / 1000 })).toEqual({
      credible: false,
      reason: 'window_reset_passed',
      message: `its window reset at ${at(T0)}, which has passed`,
    });
  });

  it('the freshness window and five minutes of clock skew are inclusive', () => {
    expect(verdict({ observed_at: at(T0 - 600_000) })).toEqual({ credible: true });
    expect(verdict({ observed_at: at(T0 + 300_000) })).toEqual({ credible: true });
  });
});

describe('assess', () => {
  const readingArb = fc.record({
    used_percent: fc.option(fc.integer({ min: 0, max: 110 }), { nil: null }),
    ageSeconds: fc.integer({ min: -400, max: 900 }),
    reset: fc.constantFrom('none', 'passed', 'ahead'),
    counted: fc.boolean(),
  });

  it("pressure is the worst credible counted reading, the guards' level alike; PREPARE falls back only when every sign says relief", () => {
    const policy = { ...POLICY, count_limit_families: ['counted'] };
    fc.assert(
      fc.property(fc.array(readingArb, { maxLength: 6 }), (specs) => {
        const readings = specs.map((s, i) =>
          reading({
            used_percent: s.used_percent,
            observed_at: at(T0 - s.ageSeconds * 1000),
            resets_at: s.reset === 'none' ? null : T0 / 1000 + (s.reset === 'passed' ? -60 : 60),
            limit: { id: s.counted ? 'counted' : 'ignored', name: null },
            executor: `s${i}`,
          }),
        );
        const counted = readings.filter((r) => r.limit?.id === 'counted');
        const credible = counted.filter((r) => credibility(r, T0, policy).credible);
        const percents = credible.map((r) => r.used_percent ?? 0);
        const top = percents.length === 0 ? null : Math.max(...percents);
        const relaxLine = policy.prepare_percent - policy.hysteresis_percent;
        // Silence is no relief: a high reading that merely went stale (or cannot be placed in time) still holds PREPARE.
        const silentHigh = counted.some((r) => {
          const v = credibility(r, T0, policy);
          return !v.credible && v.reason !== 'window_reset_passed' && (r.used_percent ?? -1) >= relaxLine;
        });

        const result = assess(readings, T0, policy);
        expect(result.worst?.used_percent ?? null).toBe(top);
        expect(result.level).toBe(top === null ? 'none' : top >= 90 ? 'evacuate' : top >= 80 ? 'prepare' : 'none');
        // The guards' shortcut judges only the readings at or above the PREPARE line, and must agree.
        expect(pressureLevel(readings, T0, policy)).toBe(result.level);
        expect(result.pressing).toEqual(credible.filter((r) => (r.used_percent ?? 0) >= 80));
        expect(result.canRelax).toBe(credible.length > 0 && percents.every((p) => p < relaxLine) && !silentHigh);
      }),
      { numRuns: 500 },
    );
  });

  it('the first of equally bad readings is the one shown', () => {
    const first = reading({ executor: 'a', used_percent: 85 });
    expect(assess([first, reading({ executor: 'b', used_percent: 85 })], T0, POLICY).worst).toBe(first);
  });
});

describe('per-model limit families', () => {
  it('count for pressure only when configured; the account-wide window always counts', () => {
    expect(countsForPressure(reading(), POLICY)).toBe(true);
    expect(countsForPressure(reading({ limit: family }), POLICY)).toBe(false);
    expect(countsForPressure(reading({ limit: family }), { ...POLICY, count_limit_families: ['gpt-5-codex'] })).toBe(true);
  });

  it('say in status why they do not count', () => {
    expect(uncountedFamilyMessage(reading({ limit: family }))).toBe(
      'per-model limit family GPT-5 Codex (gpt-5-codex): shown, not counted (pressure.count_limit_families)',
    );
    expect(uncountedFamilyMessage(reading({ limit: { id: 'x', name: null } }))).toBe(
      'per-model limit family x: shown, not counted (pressure.count_limit_families)',
    );
    expect(uncountedFamilyMessage(reading())).toBe('');
  });

  it('get a slot of their own, as does each session and metric', () => {
    const keys = [reading(), reading({ executor: 's2' }), reading({ executor: null }), reading({ metric: 'context' }), reading({ limit: family })].map(
      readingKey,
    );
    expect(keys).toEqual([
      'claude-statusline/five_hour/s1',
      'claude-statusline/five_hour/s2',
      'claude-statusline/five_hour/-',
      'claude-statusline/context/s1',
      'claude-statusline/five_hour/s1/gpt-5-codex',
    ]);
  });
});

describe('describeReading', () => {
  it('names the metric, the family, the percent and the source', () => {
    expect(describeReading(reading())).toBe('five_hour 50 % from claude-statusline');
    expect(describeReading(reading({ used_percent: null, limit: family, source: 'codex-rollout' }))).toBe('five_hour (GPT-5 Codex) unknown from codex-rollout');
    expect(describeReading(reading({ limit: { id: 'x', name: null } }))).toBe('five_hour (x) 50 % from claude-statusline');
  });
});

describe('samePolicy', () => {
  it('tells a changed policy by any of its fields, and the counted families as a list', () => {
    expect(samePolicy(POLICY, { ...POLICY })).toBe(true);
    expect(samePolicy(POLICY, { ...POLICY, count_limit_families: [] })).toBe(true);
    for (const change of [
      { prepare_percent: 70 },
      { evacuate_percent: 95 },
      { hysteresis_percent: 2 },
      { freshness_seconds: 60 },
      { count_limit_families: ['a'] },
    ]) {
      expect(samePolicy(POLICY, { ...POLICY, ...change }), JSON.stringify(change)).toBe(false);
    }
    expect(samePolicy({ ...POLICY, count_limit_families: ['a', 'b'] }, { ...POLICY, count_limit_families: ['ab'] })).toBe(false);
  });
});
