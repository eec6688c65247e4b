import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { METRICS, SOURCES, type Reading } from '../../../schemas/telemetry.schema.js';
import { refusedReading, restoreSnapshot, step, STATES, type WorkspaceEvent, type WorkspaceSnapshot } from '../../../protocol/index.js';
import { Harness, T0 } from './machine-harness.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** A reading around the harness's clock: fresh, stale, from the future, its window passed, no percent, an unknown source. */
const readingAt = (at: number) =>
  fc
    .record({
      source: fc.oneof(fc.constantFrom(...SOURCES), fc.constant('not-an-adapter')),
      metric: fc.constantFrom(...METRICS),
      used_percent: fc.oneof(fc.constant(null), fc.double({ min: 0, max: 120, noNaN: true }), fc.constantFrom(0, 79, 80, 89, 90, 100)),
      observedOffsetS: fc.oneof(fc.integer({ min: -1200, max: 600 }), fc.constantFrom(0, -1, 1, -600, -601, 300, 301)),
      resetsOffsetS: fc.oneof(fc.constant(null), fc.integer({ min: -3600, max: 6 * 3600 })),
      executor: fc.constantFrom(null, 'session-1'),
    })
    .map(({ source, metric, used_percent, observedOffsetS, resetsOffsetS, executor }): Reading => ({
      // The schema takes named adapters only; the pre-check must still agree on one it never sees.
      source: source as Reading['source'],
      metric,
      used_percent,
      observed_at: iso(at + observedOffsetS * 1000),
      resets_at: resetsOffsetS === null ? null : Math.floor(at / 1000) + resetsOffsetS,
      raw_sha256: null,
      executor,
    }));

/** A history that puts readings under several keys and moves the clock, and sometimes starts a cycle. */
const history = fc.array(
  fc.oneof(
    fc.record({ kind: fc.constant('reading' as const), seed: fc.integer({ min: 0, max: 1_000_000 }) }),
    fc.record({ kind: fc.constant('advance' as const), seconds: fc.integer({ min: 1, max: 900 }) }),
    fc.record({ kind: fc.constant('now' as const) }),
  ),
  { maxLength: 12 },
);

function built(h: Harness, seeds: readonly { kind: string; seed?: number; seconds?: number }[]): WorkspaceSnapshot {
  for (const s of seeds) {
    if (s.kind === 'advance') h.advance(s.seconds ?? 1);
    else if (s.kind === 'now') h.send({ type: 'NOW', reason: null, wait: false });
    else fc.sample(readingAt(h.at), { seed: s.seed, numRuns: 1 }).forEach((reading) => h.send({ type: 'READING', reading }));
  }
  return h.snapshot;
}

describe('refusedReading (the pre-check of a reading)', () => {
  it('answers exactly what the machine answers, and only readings the machine refuses', () => {
    fc.assert(
      fc.property(
        history,
        fc.constantFrom(...STATES),
        fc.integer({ min: 0, max: 1200 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        (seeds, state, laterS, seed) => {
          const h = new Harness();
          const reached = built(h, seeds);
          // Every stage with the same readings, policy and clock: each takes READING its own way.
          const before = restoreSnapshot({ state, context: reached.context });
          const at = h.at + laterS * 1000;
          const [reading] = fc.sample(fc.oneof(readingAt(at), readingAt(T0)), { seed, numRuns: 1 });
          if (reading === undefined) throw new Error('no reading sampled');
          const event: WorkspaceEvent = { type: 'READING', reading, at, entropy: 'k3f7qa' };
          const machine = step(h.scope, before, event).outcome;
          const early = refusedReading(before.context, reading, at);
          if (early === null) expect(machine.code === 'reading_not_credible' && !machine.changed).toBe(false);
          else expect(early).toStrictEqual(machine);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('refuses a reading older than the one kept under its key, as the machine does', () => {
    const h = new Harness();
    h.advance(60);
    expect(h.reading('five_hour', 40).code).toBe('reading_recorded');
    const older: Reading = {
      source: 'claude-statusline',
      metric: 'five_hour',
      used_percent: 41,
      resets_at: null,
      observed_at: iso(h.at - 30_000),
      raw_sha256: null,
      executor: 'session-1',
    };
    const early = refusedReading(h.context, older, h.at);
    expect(early?.data).toStrictEqual({ reason: 'superseded' });
    expect(early).toStrictEqual(step(h.scope, h.snapshot, { type: 'READING', reading: older, at: h.at, entropy: 'k3f7qa' }).outcome);
  });

  it('leaves a reading under the same key at the same instant or later to the machine: it may change something', () => {
    const h = new Harness();
    h.advance(60);
    expect(h.reading('five_hour', 40).code).toBe('reading_recorded');
    const kept = h.context.readings['claude-statusline/five_hour/session-1'];
    if (kept === undefined) throw new Error('the reading is kept under its key');
    for (const laterMs of [0, 1000]) {
      const reading: Reading = { ...kept, used_percent: 45, observed_at: iso(Date.parse(kept.observed_at) + laterMs) };
      expect(refusedReading(h.context, reading, h.at + laterMs)).toBeNull();
    }
  });
});
