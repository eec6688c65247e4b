import { describe, expect, it } from 'vitest';
import { offerCarryWords } from '../../../protocol/offer-carry.js';

const offer = { cycle: '20261205-0900-abcd', remote: 'origin' };

describe('what pause and unpause say about the offer on the remote', () => {
  it('a carried pause says the offer refuses accepts; a carried unpause that it is open', () => {
    expect(offerCarryWords({ ...offer, carried: true, error: null }, true)).toBe(
      "the offer of cycle 20261205-0900-abcd on origin now says paused: another machine's accept is refused",
    );
    expect(offerCarryWords({ ...offer, carried: true, error: null }, false)).toBe(
      'the offer of cycle 20261205-0900-abcd on origin is open again: another machine may accept it',
    );
  });

  it('an offer not updated says which way it does not say yet, why, and when it is tried again', () => {
    const silent = { ...offer, carried: false, error: 'origin did not answer within 10000 ms' };
    expect(offerCarryWords(silent, true)).toBe(
      'the offer of cycle 20261205-0900-abcd on origin does not say paused yet: origin did not answer within 10000 ms (the daemon tries again at each `handoff status` and lease sync)',
    );
    expect(offerCarryWords(silent, false)).toContain('does not say open yet: origin did not answer');
    expect(offerCarryWords({ ...offer, carried: false, error: null }, true)).toContain('does not say paused yet: no answer (');
  });
});
