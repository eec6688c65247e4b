import { describe, expect, it } from 'vitest';
import { step, type WorkspaceEvent } from '../../../protocol/index.js';
import { Harness } from './machine-harness.js';

const reading = (h: Harness, used_percent: number) =>
  ({
    type: 'READING',
    at: h.at,
    entropy: 'k3f7qa',
    reading: {
      source: 'claude-statusline',
      metric: 'five_hour',
      used_percent,
      resets_at: null,
      observed_at: new Date(h.at).toISOString(),
      raw_sha256: null,
      executor: 's1',
    },
  }) as WorkspaceEvent;

describe('step', () => {
  it("hands back each step's own effects: a later step neither adds to nor empties an earlier one's", () => {
    const h = new Harness();
    const evacuate = step(h.snapshot, reading(h, 95));
    expect([evacuate.next.value, evacuate.effects]).toEqual(['EVACUATE', ['startDrain']]);
    const quiet = step(h.snapshot, reading(h, 40));
    const again = step(evacuate.next, { type: 'NOW', reason: null, wait: true, at: h.at, entropy: 'k3f7qa' });
    expect([quiet.next.value, quiet.effects]).toEqual(['NORMAL', []]);
    expect(again.effects).toEqual([]);
    expect(evacuate.effects).toEqual(['startDrain']);
  });

  it('leaves the snapshot it was given as it was', () => {
    const h = new Harness();
    const before = h.snapshot;
    const context = structuredClone(before.context);
    step(before, reading(h, 95));
    expect([before.value, before.context]).toEqual(['NORMAL', context]);
  });
});
