import { describe, expect, it } from 'vitest';
import { editPolicy, STATES } from '../../../protocol/index.js';

describe('who may change files', () => {
  it.each([
    ['NORMAL', 'anyone'],
    ['PREPARE', 'anyone'],
    ['EVACUATE', 'holder'],
    ['HANDOFF_READY', 'nobody'],
    ['TAKEOVER', 'holder'],
    ['RETURN_HANDOFF_READY', 'nobody'],
    ['CLOSED', 'anyone'],
  ] as const)('%s: %s', (state, who) => {
    expect(editPolicy(state, null, 'refuse').who).toBe(who);
  });

  it('an unverifiable travelling lease stops every edit by default, and can be set to trust the last known holder', () => {
    expect(editPolicy('TAKEOVER', '2026-11-29T08:00:00.000Z', 'refuse')).toMatchObject({ who: 'nobody', why: expect.stringMatching(/could not be verified/) });
    expect(editPolicy('TAKEOVER', '2026-11-29T08:00:00.000Z', 'last_known').who).toBe('holder');
    // Before a handoff there is nothing travelling to verify.
    for (const state of STATES.filter((s) => !['HANDOFF_READY', 'TAKEOVER', 'RETURN_HANDOFF_READY'].includes(s))) {
      expect(editPolicy(state, '2026-11-29T08:00:00.000Z', 'refuse').who).not.toBe('nobody');
    }
  });
});
