import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { heldBack, stageMove } from '../../../protocol/index.js';
import { Harness, PAUSE } from './machine-harness.js';

/** A workspace paused by either switch or both, that then saw a five-hour reading of `p` %. */
function pausedAt(p: number, scopes: readonly ('workspace' | 'global')[]): Harness {
  const h = new Harness();
  for (const scope of scopes) h.send({ type: 'PAUSE_SET', scope, pause: PAUSE });
  h.advance(5);
  h.reading('five_hour', p);
  return h;
}
const SCOPES = fc.constantFrom<readonly ('workspace' | 'global')[]>(['workspace'], ['global'], ['workspace', 'global']);

describe('heldBack', () => {
  it('names the stage lifting every kill switch would start, with the reading that calls for it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100 }), SCOPES, (p, scopes) => {
        const h = pausedAt(p, scopes);
        expect(h.state).toBe('NORMAL');
        const state = p >= 90 ? 'EVACUATE' : p >= 80 ? 'PREPARE' : null;
        expect(heldBack(h.snapshot, h.at)).toEqual(state === null ? null : { state, metric: 'five_hour', percent: p, source: 'claude-statusline' });
      }),
      { numRuns: 40 },
    );
  });

  it('holds nothing back in a workspace no switch pauses', () => {
    const h = new Harness();
    h.reading('five_hour', 95);
    expect([h.state, heldBack(h.snapshot, h.at)]).toEqual(['EVACUATE', null]);
  });
});

describe('stageMove', () => {
  it('is the stage with the worst reading the machine judges by, and no reading when there is none', () => {
    const h = new Harness();
    expect(stageMove(h.snapshot)).toEqual({ state: 'NORMAL', metric: null, percent: null, source: null });
    h.reading('context', 85);
    expect(stageMove(h.snapshot)).toEqual({ state: 'PREPARE', metric: 'context', percent: 85, source: 'claude-statusline' });
  });
});
