import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { persist, restoreSnapshot, stateOf, step, type WorkspaceEvent, type WorkspaceSnapshot } from '../../../protocol/index.js';
import { bodyOf, eventArb, Harness, historyArb, SCRIPTS, walk, type Visit } from './machine-harness.js';

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
    const evacuate = step(h.scope, h.snapshot, reading(h, 95));
    expect([evacuate.next.value, evacuate.effects]).toEqual(['EVACUATE', ['startDrain']]);
    const quiet = step(h.scope, h.snapshot, reading(h, 40));
    const again = step(h.scope, evacuate.next, { type: 'NOW', reason: null, wait: true, at: h.at, entropy: 'k3f7qa' });
    expect([quiet.next.value, quiet.effects]).toEqual(['NORMAL', []]);
    expect(again.effects).toEqual([]);
    expect(evacuate.effects).toEqual(['startDrain']);
  });

  it('leaves the snapshot it was given as it was', () => {
    const h = new Harness();
    const before = h.snapshot;
    const context = structuredClone(before.context);
    step(h.scope, before, reading(h, 95));
    expect([before.value, before.context]).toEqual(['NORMAL', context]);
  });
});

describe('the effects a step asks for', () => {
  it('only the drain and the rehearsal, each at most once: the drain when a leg starts draining and never outside one, the rehearsal when PREPARE is entered and never elsewhere', () => {
    const draining = (s: WorkspaceSnapshot) => s.value === 'EVACUATE' || JSON.stringify(s.value) === '{"TAKEOVER":"returning"}';
    const preparing = (s: WorkspaceSnapshot) => s.value === 'PREPARE';
    const { scope } = new Harness();
    fc.assert(
      fc.property(historyArb, (history) => {
        walk(history, ({ body, before, next, at, entropy }) => {
          const { effects } = step(scope, before, { ...body, at, entropy } as WorkspaceEvent);
          const drain = effects.includes('startDrain');
          const rehearsal = effects.includes('startRehearsal');
          expect(effects).toHaveLength(Number(drain) + Number(rehearsal));
          // Staying in a draining leg may start its drain again (a new holder takes the return leg's fence over): the daemon resumes it.
          if (!(draining(before) && draining(next))) expect(drain).toBe(draining(next));
          if (!(preparing(before) && preparing(next))) expect(rehearsal).toBe(preparing(next));
        });
      }),
      { numRuns: 30 },
    );
  });
});

describe('persist and restoreSnapshot', () => {
  it('every scripted place, TAKEOVER held and returning included, comes back from the journal as the same state node', () => {
    for (const script of Object.keys(SCRIPTS)) {
      let last: Visit | null = null;
      walk([script, [], 'emergency-return'], (visit) => (last = visit));
      const live = (last as Visit | null)?.after;
      if (live === undefined) continue;
      const journal = JSON.parse(JSON.stringify(persist(live))) as ReturnType<typeof persist>;
      expect(restoreSnapshot(journal).value, script).toEqual(live.value);
    }
  });

  it('a daemon restarted from its journal goes on exactly as the one that wrote it would have', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 30 }), eventArb, (history, probe) => {
        const h = new Harness();
        for (const e of history) {
          h.advance(7);
          h.send(bodyOf(e, h.at));
        }
        const journal: unknown = JSON.parse(JSON.stringify(persist(h.snapshot)));
        const restored = restoreSnapshot(journal as ReturnType<typeof persist>);
        expect(stateOf(restored)).toBe(h.state);
        expect(restored.value).toEqual(h.snapshot.value);
        const event = { ...bodyOf(probe, h.at + 7000), at: h.at + 7000, entropy: 'k3f7qa' } as WorkspaceEvent;
        const live = step(h.scope, h.snapshot, event);
        const again = step(h.scope, restored, event);
        expect([stateOf(again.next), again.outcome, again.effects]).toEqual([stateOf(live.next), live.outcome, live.effects]);
      }),
      { numRuns: 150 },
    );
  });

  it('a journal written before the context named its stage restores with the stage of its state', () => {
    const h = new Harness();
    h.send({ type: 'NOW', reason: null, wait: false });
    const { state, context } = persist(h.snapshot);
    const restored = restoreSnapshot({ state, context: { ...context, stage: 'NORMAL' } });
    expect([stateOf(restored), restored.context.stage]).toEqual(['EVACUATE', 'EVACUATE']);
  });
});
