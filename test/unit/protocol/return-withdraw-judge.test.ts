import { describe, expect, it } from 'vitest';
import {
  claimOffer,
  closeOneWay,
  judgeLeaseChain,
  judgeLeaseMove,
  newDrain,
  nextSteps,
  offered,
  offerReturn,
  withdrawReturn,
  type Cycle,
  type DrainProgress,
  type LeaseMove,
  type RemoteLeaseRecord,
} from '../../../protocol/index.js';

/** The holder's withdrawal of its return on offer (protocol/remote-lease.ts): `taken` again, same holder, same token. */
const AT = '2026-11-30T10:00:00.000Z';
const manifest = { path: 'manifest.json', sha256: 'a'.repeat(64) };
const offer = offered('20261130T100000Z-abcdef', 3, { executor: 'primary', token: 3 }, manifest, AT);

function moved(move: LeaseMove): RemoteLeaseRecord {
  if (!move.ok) throw new Error(move.reason);
  return move.record;
}

describe('withdrawing a return on offer', () => {
  const taken = moved(claimOffer(offer, 'b', AT));
  const returned = moved(offerReturn(taken, 4, { path: 'return/manifest.json', sha256: 'b'.repeat(64) }, AT));

  it('gives the lease back to the holder that offered it, and the chain on to a one-way close or a second return is legal', () => {
    const withdrawn = moved(withdrawReturn(returned, 4, AT));
    expect(withdrawn).toMatchObject({ state: 'taken', holder: { executor: 'b', token: 4 }, last_token: 4 });
    const closed = moved(closeOneWay(withdrawn, 4, AT));
    expect(judgeLeaseChain(offer, [taken, returned, withdrawn, closed])).toBeNull();
    const again = moved(offerReturn(withdrawn, 4, { path: 'return/manifest.1.json', sha256: 'c'.repeat(64) }, AT));
    expect(judgeLeaseChain(offer, [taken, returned, withdrawn, again, moved(claimOffer(again, 'primary', AT))])).toBeNull();
    // A cancel that stopped between the push and the machine: already withdrawn, nothing more to write.
    expect(withdrawReturn(withdrawn, 4, AT)).toEqual({ ok: true, record: withdrawn });
  });

  it('a primary that took the work back first wins (lease_held, naming it); another token is stale', () => {
    const closed = moved(claimOffer(returned, 'primary', AT));
    const lost = withdrawReturn(closed, 4, AT);
    expect(lost).toMatchObject({ ok: false, code: 'lease_held' });
    expect(lost.ok ? '' : lost.reason).toContain('primary');
    expect(withdrawReturn(returned, 3, AT)).toMatchObject({ ok: false, code: 'stale_token' });
  });

  it('refuses a forged withdrawal: another holder, a new token, a changed last_token', () => {
    expect(judgeLeaseMove(returned, { ...returned, state: 'taken', holder: { executor: 'm', token: 4 } })).toContain('not made by the holder');
    expect(judgeLeaseMove(returned, { ...returned, state: 'taken', holder: { executor: 'b', token: 5 }, last_token: 5 })).toContain('not made by the holder');
    expect(judgeLeaseMove(returned, { ...returned, state: 'taken', last_token: 9 })).toContain('changes last_token');
    expect(judgeLeaseMove(returned, { ...returned, state: 'broken', holder: null })).toContain('not a move');
  });
});

describe('the ways out of a receiver waiting for its return to be taken back', () => {
  const drain = (leg: 'out' | 'return', steps: DrainProgress['steps']): DrainProgress => ({ ...newDrain(leg, true, AT), steps });
  const done = (summary: Record<string, string>) => ({ at: AT, sha256: null, summary });
  const cycle = (returnSteps: DrainProgress['steps']): Cycle => ({
    id: offer.cycle,
    started_at: AT,
    trigger: { kind: 'manual', reason: 'by hand', readings: [] },
    profile: 'emergency-return',
    checkpoint: null,
    return_checkpoint: null,
    // Imported through the remote: the out leg drained on the primary's machine (no inspect step here).
    drain: drain('out', { snapshot: done({}) }),
    receiver: { executor: 'b', root: '/b', token: 4 },
    remote: { name: 'origin', lease_head: 'c'.repeat(40) },
    return_drain: drain('return', returnSteps),
  });
  const next = (c: Cycle) =>
    nextSteps({
      state: 'RETURN_HANDOFF_READY',
      paused: null,
      blocked: null,
      cycle: c,
      lease: { holder: null, last_token: 4, offered: true, last_break: null },
      pressure: null,
    }).map((step) => step.verb);

  it('the holder whose return drained here may withdraw it after waiting; a machine that only follows it waits', () => {
    expect(next(cycle({ offer: done({ lease_head: 'd'.repeat(40) }) }))).toEqual(['wait', 'cancel']);
    expect(next(cycle({ package: done({ manifest: 'return/manifest.json' }) }))).toEqual(['wait']);
  });

  it("one machine (the out leg drained here): the primary takes it back here; the holder withdraws it in the receiver's checkout", () => {
    const here = (returnSteps: DrainProgress['steps']): Cycle => ({ ...cycle(returnSteps), drain: drain('out', { inspect: done({}) }) });
    const ways = (c: Cycle) =>
      nextSteps({
        state: 'RETURN_HANDOFF_READY',
        paused: null,
        blocked: null,
        cycle: c,
        lease: { holder: null, last_token: 4, offered: true, last_break: null },
        pressure: null,
      });
    expect(ways(here({ offer: done({ lease_head: 'd'.repeat(40) }) })).map((step) => [step.verb, step.repo])).toEqual([
      ['accept --return', null],
      ['cancel', '/b'],
    ]);
    // A return that went out through no remote is taken back here only: there is nothing to withdraw.
    expect(next(here({ package: done({ manifest: 'return/manifest.json' }) }))).toEqual(['accept --return']);
  });
});
