import { describe, expect, it } from 'vitest';
import { outcomeEnvelope } from '../../../protocol/outcome-envelope.js';
import { Harness } from './machine-harness.js';

describe('outcomeEnvelope: a success says what changed and, under the kill switch, what it would have done', () => {
  it('a reading the kill switch holds back is answered with the stage it would have moved to', () => {
    const h = new Harness();
    h.send({ type: 'PAUSE_SET', scope: 'workspace', pause: { reason: 'demo', since: '2026-08-20T10:00:00.000Z', path: '/repo/.session-handoff/PAUSE' } });
    const held = h.reading('five_hour', 95);
    const answer = outcomeEnvelope(held, h.snapshot);
    expect(answer.error).toBeUndefined();
    expect(answer.data).toMatchObject({
      workspace: '/repo',
      state: 'NORMAL',
      changed: held.changed,
      held_back: { state: 'EVACUATE', metric: 'five_hour', percent: 95 },
    });
  });

  it('without the kill switch a success carries no held_back at all', () => {
    const h = new Harness();
    const moved = h.reading('five_hour', 85);
    const data = outcomeEnvelope(moved, h.snapshot).data as Record<string, unknown>;
    expect(data).toMatchObject({ state: 'PREPARE', changed: true });
    expect(data).not.toHaveProperty('held_back');
  });
});
