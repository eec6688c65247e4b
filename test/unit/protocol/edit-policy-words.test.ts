import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { editPolicy } from '../../../protocol/edit-policy.js';
import { STATES } from '../../../protocol/workspace-machine.js';

const SINCE = '2026-11-29T08:00:00.000Z';

/** What the Claude Code guard tells an agent whose edit it stops or lets through, state by state. */
const TRUSTED = {
  NORMAL: { who: 'anyone', why: 'no handoff in progress' },
  PREPARE: { who: 'anyone', why: 'no handoff in progress' },
  EVACUATE: { who: 'holder', why: 'the daemon is checkpointing: only the lease holder finishes its atomic step' },
  HANDOFF_READY: { who: 'nobody', why: 'the work is handed off and frozen until a receiver accepts it' },
  TAKEOVER: { who: 'holder', why: 'another executor took over; only the lease holder changes files' },
  RETURN_HANDOFF_READY: { who: 'nobody', why: 'the work was handed back and waits for the primary to accept it' },
  CLOSED: { who: 'anyone', why: 'no handoff in progress' },
} as const;

const TRAVELLING: readonly string[] = ['HANDOFF_READY', 'TAKEOVER', 'RETURN_HANDOFF_READY'];

describe('who may change files, and the sentence the agent reads', () => {
  it('a verified (or not travelling) lease: by the state alone', () => {
    for (const state of STATES) {
      expect(editPolicy(state, null, 'refuse')).toEqual(TRUSTED[state]);
      expect(editPolicy(state, null, 'last_known')).toEqual(TRUSTED[state]);
    }
  });

  it('a travelling lease unverified since a time: nobody by default, the last known holder when so configured; a lease that does not travel is not unverified', () => {
    fc.assert(
      fc.property(fc.constantFrom(...STATES), fc.constantFrom('refuse' as const, 'last_known' as const), (state, mode) => {
        const policy = editPolicy(state, SINCE, mode);
        if (TRAVELLING.includes(state) && mode === 'refuse') {
          expect(policy).toEqual({ who: 'nobody', why: `the lease could not be verified on the remote since ${SINCE}; edits wait until it can` });
        } else {
          expect(policy).toEqual(TRUSTED[state]);
        }
      }),
    );
  });
});
