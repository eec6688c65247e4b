import { describe, expect, it } from 'vitest';
import { applyDelta, deltaOf, movesMachine, persist, stateOf } from '../../../protocol/index.js';
import { Harness } from './machine-harness.js';

const reading = (percent: number, at: number, executor = 's1') => ({
  source: 'claude-statusline' as const,
  metric: 'five_hour' as const,
  used_percent: percent,
  resets_at: null,
  observed_at: new Date(at).toISOString(),
  raw_sha256: null,
  executor,
});

/** Sends one event and answers the delta the daemon would journal, checked to rebuild the next state. */
function change(h: Harness, send: () => void) {
  const before = persist(h.snapshot);
  send();
  const after = persist(h.snapshot);
  const delta = deltaOf(before, after);
  expect(applyDelta(before, delta)).toEqual(after);
  return { delta, moved: movesMachine(delta, before.state) };
}

describe('workspace deltas', () => {
  it('a reading that moves nothing is telemetry: only the readings, the clock and the answer change', () => {
    const h = new Harness();
    const { delta, moved } = change(h, () => h.send({ type: 'READING', reading: reading(40, h.at) }));
    expect(moved).toBe(false);
    expect(Object.keys(delta.set).sort()).toEqual(['entropy', 'outcome']);
    expect(Object.keys(delta.readings?.put ?? {})).toEqual(['claude-statusline/five_hour/s1']);
  });

  it('a reading that crosses a line moves the machine and carries the stage fields', () => {
    const h = new Harness();
    const { delta, moved } = change(h, () => h.send({ type: 'READING', reading: reading(85, h.at) }));
    expect(moved).toBe(true);
    expect(delta.state).toBe('PREPARE');
    expect(delta.set).toHaveProperty('prepare_since');
  });

  it('a lease change moves the machine and its record holds the lease, not the readings', () => {
    const h = new Harness();
    h.send({ type: 'READING', reading: reading(40, h.at) });
    const { delta, moved } = change(h, () => h.send({ type: 'LEASE_ACQUIRE', executor: 'me' }));
    expect(moved).toBe(true);
    expect(delta.readings).toBeUndefined();
    expect(delta.set.lease?.holder?.executor).toBe('me');
  });

  it('a dropped reading is named in the delta', () => {
    const h = new Harness();
    h.send({ type: 'READING', reading: reading(20, h.at, 'old') });
    h.advance(3600);
    const { delta } = change(h, () => h.send({ type: 'READING', reading: reading(30, h.at, 'new') }));
    expect(delta.readings?.drop).toEqual(['claude-statusline/five_hour/old']);
    expect(stateOf(h.snapshot)).toBe('NORMAL');
  });
});
