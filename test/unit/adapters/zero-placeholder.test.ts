import { describe, expect, it } from 'vitest';
import { isZeroPlaceholder } from '../../../adapters/telemetry/index.js';
import type { Reading } from '../../../schemas/telemetry.schema.js';

const previous: Reading = {
  source: 'codex-rollout',
  metric: 'five_hour',
  used_percent: 15,
  resets_at: 1787234400, // 2026-08-20T14:00:00Z
  observed_at: '2026-08-20T09:00:00.000Z',
  raw_sha256: null,
  executor: null,
};
const zeroBeforeReset: Reading = { ...previous, used_percent: 0, resets_at: 1787238000, observed_at: '2026-08-20T09:10:00.000Z' };

describe('isZeroPlaceholder', () => {
  it('is true for a 0 after a real reading of the same window, before that reading resets', () => {
    expect(isZeroPlaceholder(previous, zeroBeforeReset)).toBe(true);
  });

  it('is false without an earlier reading', () => {
    expect(isZeroPlaceholder(undefined, zeroBeforeReset)).toBe(false);
  });

  it('is false once the earlier window has reset', () => {
    expect(isZeroPlaceholder(previous, { ...zeroBeforeReset, observed_at: '2026-08-20T14:00:00.000Z' })).toBe(false);
  });

  it('is false for a non-zero next reading', () => {
    expect(isZeroPlaceholder(previous, { ...zeroBeforeReset, used_percent: 0.5 })).toBe(false);
  });

  it('is false when the earlier reading was itself 0 or unknown', () => {
    expect(isZeroPlaceholder({ ...previous, used_percent: 0 }, zeroBeforeReset)).toBe(false);
    expect(isZeroPlaceholder({ ...previous, used_percent: null }, zeroBeforeReset)).toBe(false);
  });

  it('is false when the earlier reading had no reset time', () => {
    expect(isZeroPlaceholder({ ...previous, resets_at: null }, zeroBeforeReset)).toBe(false);
  });

  it('compares only the same window: same source and metric', () => {
    expect(isZeroPlaceholder({ ...previous, metric: 'weekly' }, zeroBeforeReset)).toBe(false);
    expect(isZeroPlaceholder({ ...previous, source: 'claude-statusline' }, zeroBeforeReset)).toBe(false);
  });
});
