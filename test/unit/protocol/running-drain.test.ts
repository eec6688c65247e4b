import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newDrain, runningDrain, STATES } from '../../../protocol/index.js';
import { cycleAt, T0 } from './machine-harness.js';

describe('runningDrain', () => {
  it("is the out leg's drain in EVACUATE, the return leg's in TAKEOVER, and none anywhere else or without a cycle", () => {
    const back = newDrain('return', false, new Date(T0).toISOString());
    fc.assert(
      fc.property(fc.constantFrom(...STATES), fc.boolean(), (state, returning) => {
        const cycle = { ...cycleAt({ inspect: true }), return_drain: returning ? back : null };
        const expected = state === 'EVACUATE' ? cycle.drain : state === 'TAKEOVER' ? cycle.return_drain : null;
        expect(runningDrain(state, cycle)).toBe(expected);
        expect(runningDrain(state, null)).toBeNull();
      }),
    );
  });
});
