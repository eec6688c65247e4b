import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DRAIN_STEPS, newDrain, type DrainProgress, type StepRecord } from '../../../protocol/index.js';
import { closableOneWay, currentStep, drainKey, keptRef, newCycle, offerTravels, returnDrain, withDrain } from '../../../protocol/machine/cycle-rules.js';
import { contextAt, cycleAt, T0 } from './machine-harness.js';

const iso = (ms: number) => new Date(ms).toISOString();
const record = (summary: StepRecord['summary'] = {}): StepRecord => ({ at: iso(T0), sha256: null, summary });
const withStep = (drain: DrainProgress, step: (typeof DRAIN_STEPS)[number], summary: StepRecord['summary'] = {}): DrainProgress => ({
  ...drain,
  steps: { ...drain.steps, [step]: record(summary) },
});
const RET = newDrain('return', false, iso(T0 - 10_000));
const MANUAL = { kind: 'manual' as const, reason: 'handoff now', readings: [] };

describe('newCycle', () => {
  it("starts a cycle named by the event's time and entropy, with a fresh out leg that waits unless told not to", () => {
    const context = { ...contextAt('NORMAL'), entropy: 'k3f7qa', profile: 'one-way' as const };
    const cycle = newCycle(context, MANUAL);
    expect(cycle).toEqual({
      id: '20260820T100000Z-k3f7qa',
      started_at: iso(T0),
      trigger: MANUAL,
      profile: 'one-way',
      checkpoint: null,
      return_checkpoint: null,
      drain: newDrain('out', false, iso(T0)),
      receiver: null,
      return_drain: null,
      remote: null,
    });
    expect(newCycle(context, MANUAL, true).drain.no_wait).toBe(true);
  });
});

describe('returnDrain', () => {
  it('is a fresh return leg when no return was cancelled before', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.constantFrom(undefined, null), (noWait, abandoned) => {
        const cycle = { ...cycleAt({ inspect: true }), ...(abandoned === undefined ? {} : { abandoned_return: abandoned }) };
        expect(returnDrain(cycle, noWait, iso(T0))).toEqual(newDrain('return', noWait, iso(T0)));
      }),
    );
  });

  it("continues a cancelled return's revisions, chained to its manifests and its snapshot", () => {
    const old = {
      ...withStep(RET, 'snapshot', { commit: 'c1', ref: 'refs/heads/handoff/x-return' }),
      revision: 2,
      manifests: ['m1', 'm2'],
      previous_commit: 'c0',
    };
    const cycle = { ...cycleAt({ inspect: true }), abandoned_return: old };
    expect(returnDrain(cycle, true, iso(T0))).toEqual({
      ...newDrain('return', true, iso(T0)),
      revision: 3,
      revision_at: iso(T0),
      manifests: ['m1', 'm2'],
      previous_commit: 'c1',
    });
    // Cancelled before its snapshot: the chain goes on from the commit the abandoned leg started from.
    const early = { ...cycle, abandoned_return: { ...old, steps: {} } };
    expect(returnDrain(early, true, iso(T0)).previous_commit).toBe('c0');
    const odd = { ...cycle, abandoned_return: withStep({ ...old, steps: {} }, 'snapshot', { commit: 7 }) };
    expect(returnDrain(odd, true, iso(T0)).previous_commit).toBe('c0');
  });
});

describe('keptRef', () => {
  it('keeps the checkpoint ref an ended drain made, and nothing else', () => {
    expect(keptRef(withStep(RET, 'snapshot', { ref: 'refs/heads/handoff/x' }))).toBe('refs/heads/handoff/x');
    expect(keptRef(withStep(RET, 'snapshot', { ref: 3 }))).toBeNull();
    expect(keptRef(RET)).toBeNull();
    expect(keptRef(null)).toBeNull();
  });
});

describe('closableOneWay', () => {
  it('closes a one-way cycle, or one whose last return leg was cancelled', () => {
    fc.assert(
      fc.property(fc.constantFrom('one-way' as const, 'emergency-return' as const), fc.boolean(), fc.boolean(), (profile, abandoned, running) => {
        const cycle = { ...cycleAt({ inspect: true }), profile, abandoned_return: abandoned ? RET : null, return_drain: running ? RET : null };
        expect(closableOneWay(cycle)).toBe(profile === 'one-way' || (abandoned && !running));
      }),
    );
    // A journal older than the field: no return was ever cancelled.
    expect(closableOneWay(cycleAt({ inspect: true }))).toBe(false);
  });
});

describe('offerTravels', () => {
  const offered = (drain: DrainProgress, head: string) => withStep(drain, 'offer', { lease_head: head });

  it("follows the return leg's own offer once a return runs: the out leg's remote is not what a return withdraws", () => {
    const remote = { ...cycleAt({ inspect: true }), remote: { name: 'origin', lease_head: 'h1' } };
    expect(offerTravels({ ...remote, return_drain: RET })).toBe(false);
    expect(offerTravels({ ...remote, return_drain: offered(RET, 'h2') })).toBe(true);
    expect(offerTravels({ ...remote, return_drain: offered(RET, '') })).toBe(false);
  });

  it('sees the out leg travel through a tracked remote or an offer step that published a chain head', () => {
    const plain = cycleAt({ inspect: true });
    expect(offerTravels(plain)).toBe(false);
    expect(offerTravels({ ...plain, remote: { name: 'origin', lease_head: null } })).toBe(true);
    expect(offerTravels({ ...plain, drain: offered(plain.drain, 'h1') })).toBe(true);
    expect(offerTravels({ ...plain, drain: offered(plain.drain, '') })).toBe(false);
    expect(offerTravels({ ...plain, drain: withStep(plain.drain, 'offer', { lease_head: null }) })).toBe(false);
  });
});

describe('drainKey', () => {
  it('names the cycle, the leg and when that drain began', () => {
    const cycle = cycleAt({ inspect: true });
    expect(drainKey(cycle, RET)).toBe(`20260820T095000Z-remote/return/${iso(T0 - 10_000)}`);
  });
});

describe('withDrain', () => {
  const mark = (drain: DrainProgress): DrainProgress => ({ ...drain, revision: drain.revision + 10 });

  it("changes the return leg's drain in TAKEOVER once a return runs, and the out leg's otherwise", () => {
    const cycle = cycleAt({ inspect: true });
    const returning = { ...cycle, return_drain: RET };
    expect(withDrain({ ...contextAt('TAKEOVER'), cycle: returning }, mark)).toEqual({ ...returning, return_drain: mark(RET) });
    expect(withDrain({ ...contextAt('TAKEOVER'), cycle }, mark)).toEqual({ ...cycle, drain: mark(cycle.drain) });
    expect(withDrain({ ...contextAt('EVACUATE'), cycle: returning }, mark)).toEqual({ ...returning, drain: mark(cycle.drain) });
    expect(withDrain({ ...contextAt('EVACUATE'), cycle: null }, mark)).toBeNull();
  });
});

describe('currentStep', () => {
  it('is the first unfinished step once the wait ended, and none while it lasts or once all are done', () => {
    fc.assert(
      fc.property(fc.subarray([...DRAIN_STEPS]), (done) => {
        const waited = { ...RET, waited: { at: iso(T0), why: 'no_wait' as const } };
        const drain = done.reduce<DrainProgress>((d, s) => withStep(d, s), waited);
        expect(currentStep(drain)).toBe(DRAIN_STEPS.find((s) => !done.includes(s)) ?? null);
        expect(currentStep({ ...drain, waited: null })).toBeNull();
      }),
    );
  });
});
