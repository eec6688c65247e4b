import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareUrgency, urgencyRank, type UrgencyInput } from '../../../protocol/urgency.js';
import { STATES } from '../../../protocol/workspace-machine.js';

/** docs: a stopped drain, a drain under way, work on offer, pressure, work held elsewhere, the quiet ones. */
const RANK = { EVACUATE: 1, HANDOFF_READY: 2, RETURN_HANDOFF_READY: 2, PREPARE: 3, TAKEOVER: 4, NORMAL: 5, CLOSED: 5 } as const;

const viewArb: fc.Arbitrary<UrgencyInput> = fc.record({
  workspace: fc.constantFrom('/a', '/b', '/a/b', '/B', '/é'),
  state: fc.constantFrom(...STATES),
  blocked: fc.constantFrom(null, 'push rejected'),
  pressure: fc.option(
    fc.record({ percent: fc.integer({ min: 0, max: 100 }), metric: fc.constant('five_hour' as const), source: fc.constant('claude-statusline' as const) }),
  ),
  cycle: fc.constantFrom(undefined, null, { id: '20261129T081500Z-k3f7qa' } as unknown as UrgencyInput['cycle']),
});

const sign = (n: number) => Math.sign(n) + 0;

describe('the order workspaces are shown in', () => {
  it('a blocked drain ranks first in any state; otherwise the stage ranks', () => {
    for (const state of STATES) {
      expect(urgencyRank({ state, blocked: null }), state).toBe(RANK[state]);
      expect(urgencyRank({ state, blocked: 'the remote is unreachable' }), state).toBe(0);
    }
  });

  it('is a total order: each pair compares one way, a view equals itself', () => {
    fc.assert(
      fc.property(viewArb, viewArb, (a, b) => {
        expect(compareUrgency(a, a)).toBe(0);
        // A sum, not a negation: -0 is not 0 to toBe, and two equal views compare 0 both ways.
        expect(sign(compareUrgency(a, b)) + sign(compareUrgency(b, a))).toBe(0);
      }),
    );
  });

  it('the more urgent rank first; within it the higher pressure, unknown pressure last; then a workspace with a cycle; then by path', () => {
    fc.assert(
      fc.property(viewArb, viewArb, (a, b) => {
        const order = sign(compareUrgency(a, b));
        const byRank = urgencyRank(a) - urgencyRank(b);
        const percent = (v: UrgencyInput) => v.pressure?.percent ?? null;
        const hasCycle = (v: UrgencyInput) => v.cycle != null;
        if (byRank !== 0) expect(order).toBe(sign(byRank));
        else if (percent(a) !== percent(b)) expect(order).toBe(percent(b) === null || (percent(a) ?? -1) > (percent(b) ?? -1) ? -1 : 1);
        else if (hasCycle(a) !== hasCycle(b)) expect(order).toBe(hasCycle(a) ? -1 : 1);
        else expect(order).toBe(a.workspace === b.workspace ? 0 : a.workspace < b.workspace ? -1 : 1);
      }),
      { numRuns: 500 },
    );
  });

  it('a pressure of 0 still comes before an unknown one', () => {
    const at = (percent: number | null): UrgencyInput => ({
      workspace: percent === null ? '/a' : '/b',
      state: 'NORMAL',
      blocked: null,
      pressure: percent === null ? null : { percent, metric: 'five_hour', source: 'claude-statusline' },
    });
    expect(compareUrgency(at(0), at(null))).toBeLessThan(0);
    expect(compareUrgency(at(null), at(0))).toBeGreaterThan(0);
  });
});
