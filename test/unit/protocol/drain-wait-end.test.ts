import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { drainWaitEnd } from '../../../protocol/drain-plan.js';

describe('where the drain wait ends on the monotonic clock', () => {
  const ms = fc.integer({ min: 0, max: 4_000_000_000_000 });
  const seconds = fc.integer({ min: 0, max: 86_400 });

  it('what the wall clock says is left of the wait, from now on the monotonic clock', () => {
    fc.assert(
      fc.property(ms, ms, seconds, fc.nat({ max: 86_400_000 }), (nowWall, nowMono, timeout, left) => {
        const remaining = Math.min(left, timeout * 1000);
        expect(drainWaitEnd(nowWall + remaining, nowWall, nowMono, timeout)).toBe(nowMono + remaining);
      }),
    );
  });

  it('a wait already over ends now; a wall clock set back never stretches it beyond the whole wait', () => {
    fc.assert(
      fc.property(ms, ms, seconds, fc.integer({ min: 1, max: 86_400_000 }), (nowWall, nowMono, timeout, beyond) => {
        expect(drainWaitEnd(nowWall - beyond, nowWall, nowMono, timeout)).toBe(nowMono);
        expect(drainWaitEnd(nowWall + timeout * 1000 + beyond, nowWall, nowMono, timeout)).toBe(nowMono + timeout * 1000);
      }),
    );
  });
});
