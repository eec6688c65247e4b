import { describe, expect, it } from 'vitest';
import { checkReading, refreshMs } from '../../../daemon/ingest/reading-check.js';
import type { PressurePolicy } from '../../../protocol/index.js';
import type { Reading } from '../../../schemas/telemetry.schema.js';

const POLICY: PressurePolicy = { prepare_percent: 80, evacuate_percent: 90, hysteresis_percent: 5, freshness_seconds: 600 };
const T0 = Date.parse('2026-11-29T10:00:00Z');

function reading(used: number | null, atMs: number, resetsAt: number | null = T0 / 1000 + 3600, source: Reading['source'] = 'codex-rollout'): Reading {
  return { source, metric: 'five_hour', used_percent: used, resets_at: resetsAt, observed_at: new Date(atMs).toISOString(), raw_sha256: null, executor: 's' };
}

describe('checkReading', () => {
  it('dispatches the first reading of a key and any changed number', () => {
    expect(checkReading(undefined, reading(50, T0), POLICY)).toEqual({ kind: 'dispatch' });
    expect(checkReading(reading(50, T0), reading(51, T0 + 1000), POLICY)).toEqual({ kind: 'dispatch' });
    expect(checkReading(reading(50, T0), reading(50, T0 + 1000, T0 / 1000 + 3700), POLICY)).toEqual({ kind: 'dispatch' });
  });

  it('holds back the same numbers seen again within the refresh interval, not after it', () => {
    expect(checkReading(reading(50, T0), reading(50, T0 + 59_000), POLICY)).toEqual({ kind: 'unchanged' });
    expect(checkReading(reading(50, T0), reading(50, T0 + 60_000), POLICY)).toEqual({ kind: 'dispatch' });
    // An older observation is the machine's to refuse (superseded), not ours to hide.
    expect(checkReading(reading(50, T0), reading(50, T0 - 1000), POLICY)).toEqual({ kind: 'dispatch' });
  });

  it('refreshes within half the freshness window when that is shorter than a minute', () => {
    const short = { ...POLICY, freshness_seconds: 30 };
    expect(refreshMs(short)).toBe(15_000);
    expect(checkReading(reading(50, T0), reading(50, T0 + 16_000), short)).toEqual({ kind: 'dispatch' });
  });

  it('refuses a zero placeholder before the earlier window reset, across payloads', () => {
    const verdict = checkReading(reading(44, T0), reading(0, T0 + 5000, T0 / 1000 + 7200), POLICY);
    expect(verdict).toMatchObject({ kind: 'not_credible', reason: 'zero_placeholder' });
    // After the earlier reset, 0 % is real.
    expect(checkReading(reading(44, T0), reading(0, T0 + 3_601_000, T0 / 1000 + 7200), POLICY)).toEqual({ kind: 'dispatch' });
  });
});
