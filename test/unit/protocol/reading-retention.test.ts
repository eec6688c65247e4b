import { describe, expect, it } from 'vitest';
import { MAX_LIVE_READINGS, readingKey, retainReadings } from '../../../protocol/index.js';
import type { Reading } from '../../../schemas/telemetry.schema.js';
import { POLICY, T0 } from './machine-harness.js';

const iso = (ms: number) => new Date(ms).toISOString();

function reading(executor: string, percent: number, observedMs: number, extra: Partial<Reading> = {}): Reading {
  return {
    source: 'claude-statusline',
    metric: 'context',
    used_percent: percent,
    resets_at: null,
    observed_at: iso(observedMs),
    raw_sha256: null,
    executor,
    ...extra,
  };
}

const byKey = (...readings: Reading[]) => Object.fromEntries(readings.map((r) => [readingKey(r), r]));
const STALE = T0 - (POLICY.freshness_seconds + 1) * 1000;

describe('retainReadings', () => {
  it('keeps fresh readings and a stale high one with nothing newer (silence is no relief)', () => {
    const kept = retainReadings(byKey(reading('a', 30, T0), reading('b', 88, STALE, { metric: 'five_hour' })), T0, POLICY);
    expect(Object.keys(kept).sort()).toEqual(['claude-statusline/context/a', 'claude-statusline/five_hour/b']);
  });

  it('drops a stale low reading, a reset window, and a stale high one that a newer session of the same metric superseded', () => {
    const kept = retainReadings(
      byKey(
        reading('low', 20, STALE),
        reading('reset', 95, T0 - 1000, { metric: 'five_hour', resets_at: Math.floor(T0 / 1000) - 1 }),
        reading('silent', 88, STALE),
        reading('now', 40, T0),
      ),
      T0,
      POLICY,
    );
    expect(Object.keys(kept)).toEqual(['claude-statusline/context/now']);
  });

  it('a per-model limit family never supersedes the account window it is not', () => {
    const account = reading('a', 88, STALE, { source: 'codex-rollout', metric: 'seven_day' });
    const spark = reading('b', 3, T0, { source: 'codex-rollout', metric: 'seven_day', limit: { id: 'codex_bengalfox', name: 'GPT-5.3-Codex-Spark' } });
    const kept = retainReadings(byKey(account, spark), T0, POLICY);
    expect(Object.keys(kept)).toHaveLength(2);
  });

  it('never keeps more than MAX_LIVE_READINGS: the oldest observations go first', () => {
    const many = Array.from({ length: MAX_LIVE_READINGS + 10 }, (_, i) => reading(`s${i}`, 50, T0 - (MAX_LIVE_READINGS + 10 - i) * 1000));
    const kept = retainReadings(byKey(...many), T0, POLICY);
    expect(Object.keys(kept)).toHaveLength(MAX_LIVE_READINGS);
    expect(kept['claude-statusline/context/s0']).toBeUndefined();
    expect(kept[`claude-statusline/context/s${MAX_LIVE_READINGS + 9}`]).toBeDefined();
  });

  it('over the bound, keeps the newest observations newest first, whatever order they arrived in', () => {
    const many = Array.from({ length: MAX_LIVE_READINGS + 3 }, (_, i) => reading(`s${i}`, 50, T0 - ((i * 37) % (MAX_LIVE_READINGS + 3)) * 1000));
    const kept = Object.values(retainReadings(byKey(...many), T0, POLICY)).map((r) => Date.parse(r.observed_at));
    const newest = many.map((r) => Date.parse(r.observed_at)).sort((a, b) => b - a);
    expect(kept).toEqual(newest.slice(0, MAX_LIVE_READINGS));
  });

  it('a reading put in is kept as if it had been added to the readings first: a newer one in its slot, a new one last', () => {
    const live = byKey(reading('a', 30, T0 - 3000), reading('b', 40, T0 - 2000), reading('c', 50, T0 - 1000));
    const order = (kept: Record<string, Reading>) => Object.entries(kept).map(([key, r]) => [key, r.used_percent]);
    for (const put of [reading('b', 45, T0), reading('d', 60, T0)]) {
      const key = readingKey(put);
      expect(order(retainReadings(live, T0, POLICY, { key, reading: put }))).toEqual(order(retainReadings({ ...live, [key]: put }, T0, POLICY)));
    }
    expect(order(retainReadings(live, T0, POLICY, { key: readingKey(reading('b', 0, T0)), reading: reading('b', 45, T0) }))).toEqual([
      ['claude-statusline/context/a', 30],
      ['claude-statusline/context/b', 45],
      ['claude-statusline/context/c', 50],
    ]);
  });
});
