import { describe, expect, it } from 'vitest';
import { STATES } from '../../../protocol/index.js';
import { nothingToCancel, stateHint } from '../../../protocol/machine/state-words.js';
import { cycleAt } from './machine-harness.js';

describe("the machine's refusals in words", () => {
  it('name the state for a cancel the stage would take itself (it never reaches these words through the machine)', () => {
    for (const stage of ['PREPARE', 'EVACUATE', 'HANDOFF_READY'] as const) expect(nothingToCancel(stage, null)).toBe(`nothing to cancel in ${stage}`);
  });

  it('name the way on from every state, with the real cycle id where an accept takes it', () => {
    const cycle = cycleAt({ inspect: true });
    for (const stage of STATES) expect(stateHint(stage, cycle).includes(cycle.id), stage).toBe(stage === 'HANDOFF_READY' || stage === 'RETURN_HANDOFF_READY');
    expect(stateHint('HANDOFF_READY', null)).toContain('CYCLE');
  });

  it('say exactly what a person reads, state by state (the refusal of a cancel and the way on)', () => {
    const cycle = cycleAt({ inspect: true });
    const out = `handoff accept ${cycle.id}`;
    const back = `handoff accept ${cycle.id} --return`;
    expect(Object.fromEntries(STATES.map((stage) => [stage, nothingToCancel(stage, cycle)]))).toEqual({
      NORMAL: 'nothing to cancel: no stage or drain is under way',
      PREPARE: 'nothing to cancel in PREPARE',
      EVACUATE: 'nothing to cancel in EVACUATE',
      HANDOFF_READY: 'nothing to cancel in HANDOFF_READY',
      TAKEOVER: 'nothing to cancel: no return leg is under way; the lease holder hands back with `handoff return`',
      RETURN_HANDOFF_READY: `nothing to cancel: the return is ready; the primary takes the work back with \`${back}\``,
      CLOSED: 'nothing to cancel: the cycle is closed',
    });
    expect(Object.fromEntries(STATES.map((stage) => [stage, stateHint(stage, cycle)]))).toEqual({
      NORMAL: 'nothing to hand off yet: `handoff now` starts an evacuation',
      PREPARE: 'refresh the capsule; `handoff now` starts an evacuation',
      EVACUATE: 'wait for the drain to finish, or see `handoff status` for its blocked reason; `handoff cancel` gives it up',
      HANDOFF_READY: `a receiver takes over with \`${out}\``,
      TAKEOVER: 'the lease holder hands back with `handoff return`',
      RETURN_HANDOFF_READY: `the primary takes the work back with \`${back}\``,
      CLOSED: 'the cycle is closed; the next reading or `handoff now` starts a new one',
    });
  });
});
