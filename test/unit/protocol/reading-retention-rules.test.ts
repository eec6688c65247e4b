import { describe, expect, it } from 'vitest';
import { readingKey, retainReadings } from '../../../protocol/index.js';
import type { Reading } from '../../../schemas/telemetry.schema.js';
import { POLICY, T0 } from './machine-harness.js';

/** The edges of each rule of retention: which readings the live state keeps, one rule at a time. */

const RELAX_LINE = POLICY.prepare_percent - POLICY.hysteresis_percent;
const STALE = T0 - (POLICY.freshness_seconds + 1) * 1000;

function reading(executor: string, percent: number | null, observedMs: number, extra: Partial<Reading> = {}): Reading {
  return {
    source: 'claude-statusline',
    metric: 'context',
    used_percent: percent,
    resets_at: null,
    observed_at: new Date(observedMs).toISOString(),
    raw_sha256: null,
    executor,
    ...extra,
  };
}

const kept = (...readings: Reading[]): string[] =>
  Object.values(retainReadings(Object.fromEntries(readings.map((r) => [readingKey(r), r])), T0, POLICY))
    .map((r) => r.executor ?? '')
    .sort();

describe('retainReadings at the edge of each rule', () => {
  it('keeps a low reading observed in the future: the clock may be behind, and it may still count', () => {
    expect(kept(reading('ahead', 10, T0 + 10 * 60_000))).toEqual(['ahead']);
  });

  it('drops a reading no adapter sent, and one without a percent, even when fresh', () => {
    const stranger = reading('stranger', 95, T0, { source: 'not-an-adapter' as Reading['source'] });
    expect(kept(stranger, reading('silent', null, T0))).toEqual([]);
    // JSON's 1e400 parses to Infinity: a number, but no percent.
    expect(kept(reading('overflow', Number.POSITIVE_INFINITY, T0))).toEqual([]);
  });

  it('a stale reading at the relax line still holds PREPARE; just below it, it goes', () => {
    expect(kept(reading('at', RELAX_LINE, STALE, { metric: 'five_hour' }), reading('below', RELAX_LINE - 0.1, STALE))).toEqual(['at']);
  });

  it('two stale sessions observed at the same instant: neither is newer, so both stay', () => {
    expect(kept(reading('a', 88, STALE), reading('b', 88, STALE))).toEqual(['a', 'b']);
  });

  it('a newer reading supersedes only its own source and metric', () => {
    const otherSource = reading('codex', 40, T0, { source: 'codex-rollout' });
    const otherMetric = reading('weekly', 40, T0, { metric: 'seven_day' });
    expect(kept(reading('old', 88, STALE), otherSource, otherMetric)).toEqual(['codex', 'old', 'weekly']);
  });

  it('the newer reading supersedes the stale one whichever of the two was recorded first', () => {
    expect(kept(reading('now', 40, T0), reading('silent', 88, STALE))).toEqual(['now']);
  });
});
