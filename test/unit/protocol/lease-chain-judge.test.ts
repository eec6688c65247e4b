import { describe, expect, it } from 'vitest';
import {
  acquireFree,
  claimOffer,
  closeOneWay,
  judgeLeaseChain,
  judgeLeaseMove,
  letGo,
  offered,
  offerReturn,
  reofferTaken,
  withdrawOffer,
  type LeaseMove,
  type RemoteLeaseRecord,
} from '../../../protocol/index.js';

/** The judge of records read from a remote (protocol/remote-lease.ts): every verb's own move is legal, forgeries are not. */
const AT = '2026-11-30T10:00:00.000Z';
const manifest = { path: 'manifest.json', sha256: 'a'.repeat(64) };
const offer = offered('20261130T100000Z-abcdef', 3, { executor: 'primary', token: 3 }, manifest, AT);

function moved(move: LeaseMove): RemoteLeaseRecord {
  if (!move.ok) throw new Error(move.reason);
  return move.record;
}

describe('judging a lease chain', () => {
  const taken = moved(claimOffer(offer, 'b', AT));

  it('every move the daemon itself makes is legal, along a whole cycle', () => {
    const returned = moved(offerReturn(taken, 4, { path: 'return/manifest.json', sha256: 'b'.repeat(64) }, AT));
    const closed = moved(claimOffer(returned, 'primary', AT));
    expect(judgeLeaseChain(offer, [taken, returned, closed])).toBeNull();
    const broken = moved(letGo(taken, 'broken', null, AT));
    expect(judgeLeaseChain(offer, [taken, broken, moved(acquireFree(broken, 'c', AT))])).toBeNull();
    expect(judgeLeaseMove(offer, moved(withdrawOffer(offer, AT)))).toBeNull();
    expect(judgeLeaseMove(taken, moved(reofferTaken(taken, 4, AT)))).toBeNull();
    expect(judgeLeaseMove(taken, moved(closeOneWay(taken, 4, AT)))).toBeNull();
    expect(judgeLeaseMove(taken, moved(letGo(taken, 'released', 4, AT)))).toBeNull();
  });

  it('refuses a reused token, a lowered last_token, a skipped state and a close by someone else', () => {
    expect(judgeLeaseMove(offer, { ...taken, holder: { executor: 'm', token: 3 }, last_token: 3 })).toContain('already issued');
    const broken = moved(letGo(taken, 'broken', null, AT));
    expect(judgeLeaseMove(taken, { ...broken, last_token: 0 })).toContain('lowers last_token');
    expect(judgeLeaseMove(taken, { ...broken, last_token: Number.MAX_SAFE_INTEGER })).toContain('changes last_token');
    expect(judgeLeaseMove(offer, { ...offer, state: 'closed', holder: { executor: 'm', token: 4 }, last_token: 4 })).toContain('not a move');
    expect(judgeLeaseMove(offer, { ...offer, state: 'broken', holder: null })).toContain('not a move');
    expect(judgeLeaseMove(taken, { ...taken, state: 'closed', holder: { executor: 'm', token: 5 }, last_token: 5 })).toContain('changes last_token');
    expect(judgeLeaseMove(taken, { ...taken, state: 'closed', holder: { executor: 'm', token: 4 } })).toContain('not made by the holder');
    expect(judgeLeaseMove(moved(withdrawOffer(offer, AT)), taken)).toContain('not a move');
    expect(judgeLeaseMove(taken, { ...taken, state: 'withdrawn', holder: null })).toContain('not a move');
    expect(judgeLeaseChain(offer, [taken, { ...taken, state: 'closed', holder: { executor: 'm', token: 5 }, last_token: 5 }])).toMatch(/^record 2 /);
  });

  it('a one-way close needs the holder’s own token', () => {
    expect(closeOneWay(taken, 3, AT)).toMatchObject({ ok: false, code: 'stale_token' });
    expect(closeOneWay(offer, 4, AT)).toMatchObject({ ok: false, code: 'stale_token' });
  });
});
