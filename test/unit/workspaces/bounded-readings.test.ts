import { describe, expect, it } from 'vitest';
import { MAX_LIVE_READINGS } from '../../../protocol/index.js';
import type { Reading } from '../../../schemas/telemetry.schema.js';
import { Harness } from '../protocol/machine-harness.js';

// A bound on the machine's state size over a long life, not a rule of the core: it lives outside
// test/unit/protocol so the suite mutation testing re-runs per mutant stays seconds long (issue 37).
function reading(executor: string, metric: Reading['metric'], observedMs: number): Reading {
  return {
    source: 'claude-statusline',
    metric,
    used_percent: 40,
    resets_at: null,
    observed_at: new Date(observedMs).toISOString(),
    raw_sha256: null,
    executor,
  };
}

describe('a long-lived workspace', () => {
  it('the machine holds what is alive now: 10,000 sessions in turn leave a bounded state that still evacuates', () => {
    const h = new Harness();
    for (let i = 0; i < 10_000; i += 1) {
      h.advance(30);
      for (const metric of ['context', 'five_hour', 'seven_day'] as const) {
        h.send({ type: 'READING', reading: reading(`session-${i}`, metric, h.at) });
      }
    }
    expect(Object.keys(h.context.readings).length).toBeLessThanOrEqual(MAX_LIVE_READINGS);
    expect(JSON.stringify(h.context).length).toBeLessThan(64 * 1024);
    expect(h.send({ type: 'NOW', reason: null, wait: false }).code).toBe('evacuation_started');
    expect(h.state).toBe('EVACUATE');
  });
});
