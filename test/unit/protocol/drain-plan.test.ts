import { describe, expect, it } from 'vitest';
import { agentSeenWorking, DRAIN_STEPS, newDrain, nextDrainAction, type DrainProgress } from '../../../protocol/index.js';
import { Harness } from './machine-harness.js';

const T = Date.parse('2026-08-20T10:00:00Z');
const record = { at: '2026-08-20T10:00:01.000Z', sha256: null, summary: {} };

describe('nextDrainAction', () => {
  it('waits for `handoff drained` until the timeout, then goes on by itself', () => {
    const drain = newDrain('out', false, new Date(T).toISOString());
    expect(nextDrainAction(drain, T + 10_000, 60, true)).toEqual({ kind: 'wait', untilMs: T + 60_000 });
    expect(nextDrainAction(drain, T + 60_000, 60, true)).toEqual({ kind: 'waited', why: 'timeout' });
    expect(nextDrainAction({ ...drain, drained_at: 'x' }, T, 60, true)).toEqual({ kind: 'waited', why: 'drained' });
    expect(nextDrainAction(newDrain('out', true, new Date(T).toISOString()), T, 60, true)).toEqual({ kind: 'waited', why: 'no_wait' });
    // No agent session seen working: nobody will say `handoff drained`, so the drain starts at once.
    expect(nextDrainAction(drain, T + 10_000, 60, false)).toEqual({ kind: 'waited', why: 'no_agent' });
    expect(nextDrainAction({ ...drain, drained_at: 'x' }, T, 60, false)).toEqual({ kind: 'waited', why: 'drained' });
  });

  it('runs the first unfinished step, in order, and never a finished one', () => {
    let drain: DrainProgress = { ...newDrain('out', true, new Date(T).toISOString()), waited: { at: 'x', why: 'no_wait' } };
    const seen: string[] = [];
    for (;;) {
      const action = nextDrainAction(drain, T, 60, true);
      if (action.kind !== 'step') {
        expect(action.kind).toBe('done');
        break;
      }
      seen.push(action.step);
      drain = { ...drain, steps: { ...drain.steps, [action.step]: record } };
    }
    expect(seen).toEqual(['inspect', 'validate', 'snapshot', 'package', 'publish', 'offer']);
    const resumed = { ...drain, steps: { inspect: record, validate: record, snapshot: record, package: record } };
    expect(nextDrainAction(resumed, T, 60, true)).toEqual({ kind: 'step', step: 'publish' });
  });
});

describe('a new drain and a new revision', () => {
  it('a new drain waits for the agent from its start, has done nothing yet, and is the first revision of its leg', () => {
    const drain = newDrain('return', false, new Date(T).toISOString());
    expect(nextDrainAction(drain, T, 60, true)).toEqual({ kind: 'wait', untilMs: T + 60_000 });
    const waited = { ...drain, waited: { at: 'x', why: 'drained' as const } };
    expect(nextDrainAction(waited, T, 60, true)).toEqual({ kind: 'step', step: 'inspect' });
    // The first revision has no predecessor manifest and no earlier snapshot to build on.
    expect(drain).toMatchObject({ leg: 'return', revision: 1, manifests: [], previous_commit: null, revision_at: null });
  });

  it('a work tree that moved after the snapshot redoes every step that observed it, and keeps the validation', () => {
    const h = new Harness();
    h.send({ type: 'NOW', reason: null, wait: false });
    h.send({ type: 'DRAIN_WAITED', why: 'no_wait' });
    for (const step of DRAIN_STEPS.slice(0, 4)) h.send({ type: 'DRAIN_STEP_DONE', step, record });
    h.send({ type: 'DRAIN_REVISION', reason: 'the work tree moved', previous_commit: 'c1' });
    const drain = h.context.cycle?.drain;
    expect(drain).toMatchObject({ revision: 2, previous_commit: 'c1', revision_at: new Date(h.at).toISOString() });
    expect(Object.keys(drain?.steps ?? {})).toEqual(['validate']);
    expect(drain && nextDrainAction(drain, T, 60, true)).toEqual({ kind: 'step', step: 'inspect' });
  });
});

describe('agentSeenWorking', () => {
  const at = (ms: number) => new Date(ms).toISOString();
  it('a session-named reading or a capsule written since the line counts; an operator signal does not', () => {
    const since = Date.parse('2026-08-20T10:00:00Z');
    expect(agentSeenWorking({ a: { executor: 's1', observed_at: at(since + 1) } }, null, since, null)).toBe(true);
    expect(agentSeenWorking({ a: { executor: 's1', observed_at: at(since - 1) } }, null, since, null)).toBe(false);
    expect(agentSeenWorking({ a: { executor: null, observed_at: at(since + 1) } }, null, since, null)).toBe(false);
    expect(agentSeenWorking({}, at(since), since, null)).toBe(true);
    expect(agentSeenWorking({}, at(since - 1), since, null)).toBe(false);
    // The line itself counts: a reading observed at the very start of the drain is an agent at work.
    expect(agentSeenWorking({ a: { executor: 's1', observed_at: at(since) } }, null, since, null)).toBe(true);
  });

  it("a session's hook event since the line counts, whatever the readings say", () => {
    const since = Date.parse('2026-08-20T10:00:00Z');
    const headers = { a: { executor: null, observed_at: at(since + 1) } };
    expect(agentSeenWorking(headers, null, since, since)).toBe(true);
    expect(agentSeenWorking(headers, null, since, since - 1)).toBe(false);
  });
});
