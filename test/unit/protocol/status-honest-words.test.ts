import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { heldBack, statusView } from '../../../protocol/index.js';
import { plainStatus } from '../../../protocol/status-words.js';
import { Harness, T0 } from './machine-harness.js';

const pause = { reason: null, since: new Date(T0).toISOString(), path: '/repo/.session-handoff/PAUSE' };
const headline = (h: Harness) => plainStatus(statusView(h.snapshot, h.at), h.at).headline;

const eventArb = fc.oneof(
  fc.record({ kind: fc.constant('reading' as const), metric: fc.constantFrom('five_hour' as const, 'context' as const), p: fc.integer({ min: 0, max: 100 }) }),
  fc.record({ kind: fc.constant('wait' as const), seconds: fc.constantFrom(1, 60, 700) }),
  fc.constantFrom(
    { type: 'CANCEL' as const, reason: null },
    { type: 'PREPARE' as const, reason: null },
    { type: 'NOW' as const, reason: null, wait: true },
    { type: 'PAUSE_SET' as const, scope: 'workspace' as const, pause },
    { type: 'PAUSE_SET' as const, scope: 'workspace' as const, pause: null },
    { type: 'PAUSE_SET' as const, scope: 'global' as const, pause },
    { type: 'PAUSE_SET' as const, scope: 'global' as const, pause: null },
  ),
);

describe('the status words say what the state and the readings say', () => {
  it('after `handoff cancel` with a reading at 91 %: not "below the 80 % line"', () => {
    const h = new Harness();
    h.reading('five_hour', 91);
    expect(h.state).toBe('EVACUATE');
    h.send({ type: 'CANCEL', reason: null });
    expect(h.state).toBe('NORMAL');
    expect(headline(h)).toBe(
      'Working normally: five_hour at 91 % (claude-statusline), read before `handoff cancel`: only a newer reading at or above the 80 % line moves the stage again.',
    );
  });

  it('paused: says what the kill switch holds back, and unpausing does exactly that', () => {
    const h = new Harness();
    h.send({ type: 'PAUSE_SET', scope: 'workspace', pause });
    h.reading('five_hour', 95);
    expect(h.state).toBe('NORMAL');
    expect(headline(h)).toBe('Working normally: five_hour at 95 % (claude-statusline); held by the kill switch: would be EVACUATE: five_hour 95 %.');
    h.send({ type: 'PAUSE_SET', scope: 'workspace', pause: null });
    expect(h.state).toBe('EVACUATE');
  });

  it('over any run of readings, cancels, pauses and stages: never "below the N % line" for a reading at or above N, and "would be" is what unpause does', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 30 }), (events) => {
        const h = new Harness();
        for (const e of events) {
          h.advance(5);
          if ('kind' in e) {
            if (e.kind === 'wait') h.advance(e.seconds);
            else h.reading(e.metric, e.p);
          } else h.send(e);
          const view = statusView(h.snapshot, h.at);
          const words = plainStatus(view, h.at).headline;
          const credible = view.readings.filter((r) => r.credible).map((r) => r.used_percent ?? 0);
          const below = /below the (\d+) % line/.exec(words);
          if (below) for (const p of credible) expect(p, words).toBeLessThan(Number(below[1]));
          const evacuatesAt = /the daemon evacuates at (\d+) %/.exec(words);
          if (evacuatesAt) for (const p of credible) expect(p, words).toBeLessThan(Number(evacuatesAt[1]));
          const held = heldBack(h.snapshot, h.at);
          expect(words.includes('would be'), words).toBe(held !== null && (view.state === 'NORMAL' || view.state === 'PREPARE'));
          if (held !== null) {
            const free = new Harness();
            free.snapshot = h.snapshot;
            free.at = h.at;
            free.send({ type: 'PAUSE_SET', scope: 'workspace', pause: null });
            free.send({ type: 'PAUSE_SET', scope: 'global', pause: null });
            expect(free.state).toBe(held.state);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
