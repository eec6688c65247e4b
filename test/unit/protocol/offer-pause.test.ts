import { describe, expect, it } from 'vitest';
import { claimOffer, judgeLeaseMove, offered, offerPausedRefusal, offerPauseOf, pauseOffer } from '../../../protocol/index.js';

const AT = '2026-11-30T10:00:00.000Z';
const offer = offered('20261130T100000Z-abcdef', 3, null, { path: 'manifest.json', sha256: 'a'.repeat(64) }, AT);
const pause = offerPauseOf({ since: '2026-11-30T10:05:00.000Z', reason: 'stop\u001b[2J now' });

describe('the pause carried by an offer', () => {
  it('an offer paused is an `offered` record again (a legal move), refused to receivers with the reason; lifted, accepted again', () => {
    expect(pause).toEqual({ since: '2026-11-30T10:05:00.000Z', reason: 'stop [2J now' });
    const moved = pauseOffer(offer, pause, AT);
    if (!moved.ok) throw new Error(moved.reason);
    expect(moved.record).toMatchObject({ state: 'offered', holder: null, last_token: 3, paused: pause });
    expect(judgeLeaseMove(offer, moved.record)).toBeNull();
    expect(offerPausedRefusal(moved.record)).toBe(
      `the source paused cycle ${offer.cycle} on 2026-11-30T10:05:00.000Z (stop [2J now): its offer cannot be accepted while it is paused`,
    );
    const lifted = pauseOffer(moved.record, null, AT);
    if (!lifted.ok) throw new Error(lifted.reason);
    expect(offerPausedRefusal(lifted.record)).toBeNull();
    expect(offerPausedRefusal(offer)).toBeNull();
  });

  it('nothing to write when the record already says so; a lease no longer on offer has nothing to pause', () => {
    expect(pauseOffer(offer, null, AT)).toEqual({ ok: true, record: offer });
    const taken = claimOffer(offer, 'cloud', AT);
    if (!taken.ok) throw new Error(taken.reason);
    expect(pauseOffer(taken.record, pause, AT)).toMatchObject({ ok: false, code: 'wrong_state' });
  });
});
