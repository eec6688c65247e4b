import { describe, expect, it } from 'vitest';
import { Harness, T0 } from './machine-harness.js';

const KEY = 'claude-statusline/five_hour/session-1';

describe('a reading against the one already recorded for its slot', () => {
  it('an older one is refused, saying which newer reading stands, and changes nothing', () => {
    const h = new Harness();
    h.reading('five_hour', 70);
    const before = h.snapshot;
    const outcome = h.reading('five_hour', 10, { observed_at: new Date(T0 - 1).toISOString() });
    expect(outcome).toEqual({
      code: 'reading_not_credible',
      message: 'a newer five_hour reading from claude-statusline is already recorded; nothing changed',
      hint: null,
      data: { reason: 'superseded' },
      changed: false,
    });
    expect(h.snapshot).toBe(before);
  });

  it('one observed at the same instant is not older: it replaces the recorded one', () => {
    const h = new Harness();
    h.reading('five_hour', 70);
    const outcome = h.reading('five_hour', 85);
    expect([outcome.code, outcome.changed, h.context.readings[KEY]?.used_percent, h.state]).toEqual(['reading_recorded', true, 85, 'PREPARE']);
  });
});
