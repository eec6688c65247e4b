import { describe, expect, it } from 'vitest';
import { acquireFree, claimOffer, letGo, offered, offerReturn, withdrawOffer, type RemoteLeaseRecord } from '../../../protocol/index.js';

/** The moves of the travelling lease chain (protocol/remote-lease.ts): each from the record read, or why not. */
const AT = '2026-11-30T10:00:00.000Z';
const manifest = { path: 'manifest.json', sha256: 'a'.repeat(64) };
const offer = offered('20261130T100000Z-abcdef', 3, null, manifest, AT);

function moved(move: ReturnType<typeof claimOffer>): RemoteLeaseRecord {
  if (!move.ok) throw new Error(move.reason);
  return move.record;
}

describe('the travelling lease chain', () => {
  it('an offer is claimed with the next token, above the claiming workspace’s own last token too', () => {
    expect(moved(claimOffer(offer, 'b', AT))).toMatchObject({ state: 'taken', holder: { executor: 'b', token: 4 }, last_token: 4 });
    expect(moved(claimOffer(offer, 'b', AT, 9))).toMatchObject({ holder: { token: 10 }, last_token: 10 });
  });

  it('a withdrawn offer cannot be claimed, and says it was withdrawn; withdrawing again writes nothing new', () => {
    const withdrawn = moved(withdrawOffer(offer, AT));
    expect(withdrawn).toMatchObject({ state: 'withdrawn', holder: null, last_token: 3 });
    const late = claimOffer(withdrawn, 'b', AT);
    expect(late).toMatchObject({ ok: false, code: 'lease_held' });
    expect(late.ok ? '' : late.reason).toContain('withdrawn by its source');
    expect(withdrawOffer(withdrawn, AT)).toEqual({ ok: true, record: withdrawn });
  });

  it('a taken offer is not withdrawn: the refusal names the holder', () => {
    const taken = moved(claimOffer(offer, 'b', AT));
    const refused = withdrawOffer(taken, AT);
    expect(refused).toMatchObject({ ok: false, code: 'lease_held' });
    expect(refused.ok ? '' : refused.reason).toContain("'b' (token 4)");
  });

  it('break and release leave nobody holding and keep last_token; release needs the holder’s token; acquire takes the next one', () => {
    const taken = moved(claimOffer(offer, 'b', AT));
    expect(moved(letGo(taken, 'broken', null, AT))).toMatchObject({ state: 'broken', holder: null, last_token: 4 });
    expect(letGo(taken, 'released', 3, AT)).toMatchObject({ ok: false, code: 'stale_token' });
    const released = moved(letGo(taken, 'released', 4, AT));
    expect(released).toMatchObject({ state: 'released', holder: null, last_token: 4 });
    expect(letGo(released, 'broken', null, AT)).toMatchObject({ ok: false, code: 'wrong_state' });
    const again = moved(acquireFree(released, 'c', AT));
    expect(again).toMatchObject({ state: 'taken', holder: { executor: 'c', token: 5 }, last_token: 5 });
    expect(acquireFree(again, 'd', AT)).toMatchObject({ ok: false, code: 'lease_held' });
    // The new holder hands back with its own token; the old one is stale on the chain.
    expect(offerReturn(again, 4, manifest, AT)).toMatchObject({ ok: false, code: 'stale_token' });
    expect(moved(offerReturn(again, 5, manifest, AT))).toMatchObject({ state: 'return_offered', holder: { executor: 'c', token: 5 } });
  });
});
