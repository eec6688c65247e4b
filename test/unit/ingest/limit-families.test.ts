import { describe, expect, it } from 'vitest';
import { assess, countsForPressure, readingKey, type PressurePolicy } from '../../../protocol/index.js';
import type { Reading } from '../../../schemas/telemetry.schema.js';

const NOW = Date.parse('2026-11-30T12:00:00Z');
const POLICY: PressurePolicy = { prepare_percent: 80, evacuate_percent: 90, hysteresis_percent: 5, freshness_seconds: 600 };
const SPARK = { id: 'codex_bengalfox', name: 'GPT-5.3-Codex-Spark' };

const weekly = (used: number, limit?: typeof SPARK): Reading => ({
  source: 'codex-rollout',
  metric: 'weekly',
  used_percent: used,
  resets_at: NOW / 1000 + 86_400,
  observed_at: new Date(NOW - 1000).toISOString(),
  raw_sha256: null,
  executor: 's',
  ...(limit === undefined ? {} : { limit }),
});

describe('Codex limit families in the pressure policy', () => {
  it('the account and a per-model family have different reading keys', () => {
    expect(readingKey(weekly(84))).not.toBe(readingKey(weekly(3, SPARK)));
    expect(readingKey(weekly(84))).toBe('codex-rollout/weekly/s');
  });

  it('by default only the account family counts: a full Spark window moves nothing', () => {
    expect(assess([weekly(84), weekly(97, SPARK)], NOW, POLICY)).toMatchObject({ level: 'prepare', worst: { used_percent: 84 } });
    expect(assess([weekly(97, SPARK)], NOW, POLICY)).toMatchObject({ level: 'none', worst: null, canRelax: false });
    expect(countsForPressure(weekly(97, SPARK), POLICY)).toBe(false);
  });

  it('pressure.count_limit_families makes a family count', () => {
    const policy = { ...POLICY, count_limit_families: ['codex_bengalfox'] };
    expect(assess([weekly(84), weekly(97, SPARK)], NOW, policy)).toMatchObject({ level: 'evacuate', worst: { limit: SPARK } });
  });
});
