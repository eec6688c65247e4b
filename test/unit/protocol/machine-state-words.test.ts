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
});
