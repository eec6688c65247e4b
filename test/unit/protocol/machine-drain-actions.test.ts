import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DRAIN_STEPS, runningDrain } from '../../../protocol/index.js';
import { Harness, scripted, VERIFIED } from './machine-harness.js';

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

const drainOf = (h: Harness) => runningDrain(h.state, h.context.cycle);
const iso = (ms: number) => new Date(ms).toISOString();

describe('a drain that reports it has drained', () => {
  it('keeps when it first did, in either leg; the same report again is no change', () => {
    for (const script of ['evacuate', 'returning'] as const) {
      const h = scripted(script);
      h.advance(5);
      const first = h.at;
      expect(h.send({ type: 'DRAINED' })).toEqual({ code: 'ok', message: null, hint: null, data: null, changed: true });
      h.advance(60);
      expect(h.send({ type: 'DRAINED' })).toEqual({ code: 'ok', message: null, hint: null, data: null, changed: false });
      expect(drainOf(h)?.drained_at, script).toBe(iso(first));
    }
  });
});

const STEP = fc.constantFrom(...DRAIN_STEPS);
const SHA = fc.option(fc.constantFrom('a'.repeat(64), 'b'.repeat(64), 'c'.repeat(64)), { nil: null });

describe('a drain step reported done', () => {
  it("records the step, clears a blocked reason, and keeps each package step's manifest, in order, for the next package to chain to", () => {
    const blocked = scripted('evacuate blocked');
    fc.assert(
      fc.property(fc.array(fc.tuple(STEP, SHA), { minLength: 1, maxLength: 6 }), (reports) => {
        const h = new Harness();
        [h.snapshot, h.at] = [blocked.snapshot, blocked.at];
        for (const [step, sha256] of reports) {
          h.advance(3);
          const record = { at: iso(h.at), sha256, summary: {} };
          expect(h.send({ type: 'DRAIN_STEP_DONE', step, record })).toEqual({ code: 'ok', message: null, hint: null, data: { step }, changed: true });
          expect([drainOf(h)?.steps[step], h.context.blocked]).toEqual([record, null]);
        }
        const kept = reports.flatMap(([step, sha256]) => (step === 'package' && sha256 !== null ? [sha256] : []));
        expect(drainOf(h)?.manifests).toEqual(kept);
      }),
      // Each report is a whole machine step: a few dozen histories already mix every kind of report.
      { numRuns: 40 },
    );
  });
});

describe('a drain revision (the work tree moved under it)', () => {
  it('counts the revision, says why, and keeps only the steps a revision does not redo', () => {
    const h = scripted('evacuate');
    const done = { at: iso(h.at), sha256: null, summary: {} };
    for (const step of DRAIN_STEPS) h.send({ type: 'DRAIN_STEP_DONE', step, record: done });
    const before = drainOf(h);
    h.advance(30);
    expect(h.send({ type: 'DRAIN_REVISION', reason: 'the work tree moved', previous_commit: 'p1' })).toEqual({
      code: 'ok',
      message: null,
      hint: null,
      data: { reason: 'the work tree moved' },
      changed: true,
    });
    expect(drainOf(h)).toEqual({ ...before, revision: (before?.revision ?? 0) + 1, revision_at: iso(h.at), previous_commit: 'p1', steps: { validate: done } });
  });
});

describe('`handoff cancel` of a stage with no cycle', () => {
  it('goes back to NORMAL and says no cycle, leg, step or ref was under way', () => {
    const h = scripted('manual prepare');
    h.advance(10);
    expect(h.send({ type: 'CANCEL', reason: 'not now' })).toEqual({
      code: 'cancelled',
      message: null,
      hint: null,
      data: { cycle: null, leg: null, step: null, blocked: null, kept_ref: null, reason: 'not now', at: iso(h.at), state: 'NORMAL' },
      changed: true,
    });
    expect([h.state, h.context.cancelled_at]).toEqual(['NORMAL', iso(h.at)]);
  });
});

describe('a checkpoint reported but not verified recoverable', () => {
  it('blocks the drain with the reason in words and the way on, in either leg, and claims no readiness', () => {
    const reason = 'the checkpoint is not verified recoverable, so readiness is not claimed';
    const answer = {
      code: 'drain_blocked',
      message: reason,
      hint: 'run `handoff resume` to check again, or `handoff cancel` to give this leg up',
      data: { blocked: reason, step: null },
      changed: true,
    };
    const out = scripted('evacuate');
    expect(out.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: { ...VERIFIED, verified: false }, remote: null })).toEqual(answer);
    expect([out.state, out.context.blocked, out.context.lease.offered]).toEqual(['EVACUATE', reason, false]);
    const back = scripted('returning');
    const token = back.context.lease.holder?.token ?? 0;
    expect(back.send({ type: 'RETURN_READY', token, checkpoint: { ...VERIFIED, verified: false } })).toEqual(answer);
    expect([back.snapshot.value, back.context.blocked]).toEqual([{ TAKEOVER: 'returning' }, reason]);
  });
});
