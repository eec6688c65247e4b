import { describe, expect, it } from 'vitest';
import { assess } from '../../../protocol/index.js';
import { Harness, POLICY, T0 } from './machine-harness.js';

/** Claude Code's gateway spend cap (`rate_limits.spend_limit`, metric `spend`), as the status line sends it. */
const spend = { resets_at: T0 / 1000 + 9 * 86_400 };

describe('a spend reading moves the stage as a five_hour reading does', () => {
  it('NORMAL below 80, PREPARE at 80, EVACUATE at 90, with the spend reading as the trigger', () => {
    const h = new Harness();
    h.reading('spend', 79.9, spend);
    expect(h.state).toBe('NORMAL');
    h.reading('spend', 80, spend);
    expect(h.state).toBe('PREPARE');
    h.reading('spend', 90, spend);
    expect(h.state).toBe('EVACUATE');
    expect(h.context.cycle?.trigger.readings.map((r) => [r.metric, r.used_percent])).toEqual([['spend', 90]]);
  });

  it('the same verdict for spend and five_hour at each line, and spend counts beside low windows', () => {
    const at = (metric: 'spend' | 'five_hour', used: number) =>
      assess(
        [{ source: 'claude-statusline', metric, used_percent: used, ...spend, observed_at: new Date(T0).toISOString(), raw_sha256: null, executor: 's' }],
        T0,
        POLICY,
      ).level;
    for (const used of [79.9, 80, 89.9, 90, 104]) expect([used, at('spend', used)]).toEqual([used, at('five_hour', used)]);
    const h = new Harness();
    h.reading('five_hour', 12, spend);
    h.reading('seven_day', 8, spend);
    h.reading('spend', 93, spend);
    expect(h.state).toBe('EVACUATE');
  });
});
