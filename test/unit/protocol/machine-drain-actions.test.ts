import { describe, expect, it } from 'vitest';
import { Harness } from './machine-harness.js';

describe('`handoff resume` of a drain', () => {
  it('says nothing was blocked when nothing was, and changes nothing', () => {
    const h = new Harness();
    h.send({ type: 'NOW', reason: null, wait: false });
    expect(h.send({ type: 'DRAIN_RESUME' })).toEqual({ code: 'ok', message: 'nothing was blocked', hint: null, data: { was_blocked: null }, changed: false });
  });

  it('clears the reason a blocked drain stopped for, and names it', () => {
    const h = new Harness();
    h.send({ type: 'NOW', reason: null, wait: false });
    h.send({ type: 'DRAIN_BLOCKED', reason: 'push rejected', step: 'publish' });
    expect(h.send({ type: 'DRAIN_RESUME' })).toEqual({ code: 'ok', message: null, hint: null, data: { was_blocked: 'push rejected' }, changed: true });
    expect(h.context.blocked).toBeNull();
  });
});
