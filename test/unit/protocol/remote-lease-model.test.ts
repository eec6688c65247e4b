import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  acquireFree,
  checkpointRef,
  claimOffer,
  closeOneWay,
  judgeLeaseMove,
  leaseRef,
  leaseTravels,
  letGo,
  offered,
  offerReturn,
  packagesRef,
  reofferTaken,
  serializeLeaseRecord,
  STATES,
  travellingLeaseRefusal,
  withdrawOffer,
  withdrawReturn,
  type LeaseMove,
  type RemoteLeaseRecord,
  type RemoteLeaseState,
} from '../../../protocol/index.js';
import { cycle } from './manifest-fixture.js';

/**
 * Every verb of the travelling lease chain, from every state, against a small model of what it must do:
 * which states a verb moves from, into which, whether it needs the holder's token, and the token it issues.
 */
const AT = '2026-11-30T10:00:00.000Z';
const CYCLE = '20261130T100000Z-abcdef';
const manifest = { path: 'manifest.json', sha256: 'a'.repeat(64) };
const LEASE_STATES: readonly RemoteLeaseState[] = ['offered', 'taken', 'return_offered', 'broken', 'released', 'closed', 'withdrawn'];

type Verb =
  | { readonly verb: 'claimOffer' | 'acquireFree'; readonly executor: string; readonly local: number }
  | { readonly verb: 'withdrawOffer' }
  | { readonly verb: 'withdrawReturn' | 'offerReturn' | 'reofferTaken' | 'closeOneWay' | 'released'; readonly token: number }
  | { readonly verb: 'broken' };

function apply(record: RemoteLeaseRecord, v: Verb): LeaseMove {
  switch (v.verb) {
    case 'claimOffer':
      return claimOffer(record, v.executor, AT, v.local);
    case 'acquireFree':
      return acquireFree(record, v.executor, AT, v.local);
    case 'withdrawOffer':
      return withdrawOffer(record, AT);
    case 'withdrawReturn':
      return withdrawReturn(record, v.token, AT);
    case 'offerReturn':
      return offerReturn(record, v.token, manifest, AT);
    case 'reofferTaken':
      return reofferTaken(record, v.token, AT);
    case 'closeOneWay':
      return closeOneWay(record, v.token, AT);
    case 'released':
    case 'broken':
      return letGo(record, v.verb, v.verb === 'released' ? v.token : null, AT);
  }
}

type Expected = { ok: true; state: RemoteLeaseState; holder: 'new' | 'kept' | 'none'; same?: true } | { ok: false; code: string };

/** What the chain must do: the rules a user of `handoff accept/return/cancel/lease` relies on. */
function model(record: RemoteLeaseRecord, v: Verb): Expected {
  const { state } = record;
  const holds = 'token' in v && record.holder?.token === v.token;
  switch (v.verb) {
    case 'claimOffer':
      if (state === 'offered') return { ok: true, state: 'taken', holder: 'new' };
      if (state === 'return_offered') return { ok: true, state: 'closed', holder: 'new' };
      return { ok: false, code: 'lease_held' };
    case 'acquireFree':
      return state === 'broken' || state === 'released' ? { ok: true, state: 'taken', holder: 'new' } : { ok: false, code: 'lease_held' };
    case 'withdrawOffer':
      if (state === 'withdrawn') return { ok: true, state, holder: 'none', same: true };
      return state === 'offered' ? { ok: true, state: 'withdrawn', holder: 'none' } : { ok: false, code: 'lease_held' };
    case 'withdrawReturn':
      if (state === 'taken' && holds) return { ok: true, state, holder: 'kept', same: true };
      if (state !== 'return_offered') return { ok: false, code: 'lease_held' };
      return holds ? { ok: true, state: 'taken', holder: 'kept' } : { ok: false, code: 'stale_token' };
    case 'offerReturn':
    case 'reofferTaken':
    case 'closeOneWay': {
      const to = { offerReturn: 'return_offered', reofferTaken: 'offered', closeOneWay: 'closed' } as const;
      if (state !== 'taken' || !holds) return { ok: false, code: 'stale_token' };
      return { ok: true, state: to[v.verb], holder: v.verb === 'reofferTaken' ? 'none' : 'kept' };
    }
    case 'released':
    case 'broken':
      if (state !== 'taken' || record.holder === null) return { ok: false, code: 'wrong_state' };
      if (v.verb === 'released' && !holds) return { ok: false, code: 'stale_token' };
      return { ok: true, state: v.verb, holder: 'none' };
  }
}

const holderArb = fc.option(fc.record({ executor: fc.constantFrom('alice', 'bob'), token: fc.integer({ min: 1, max: 6 }) }), { nil: null });
const recordArb = fc
  .record({ state: fc.constantFrom(...LEASE_STATES), holder: holderArb, extra: fc.nat({ max: 3 }) })
  .map(({ state, holder, extra }) => ({ ...offered(CYCLE, (holder?.token ?? 0) + extra, holder, manifest, '2026-11-30T09:00:00.000Z'), state }));

/** Tokens a caller may present: often the holder's own, sometimes one it does not hold. */
const verbArb = (record: RemoteLeaseRecord): fc.Arbitrary<Verb> => {
  const token = fc.oneof(fc.constant(record.holder?.token ?? 1), fc.integer({ min: 0, max: 8 }));
  return fc.oneof(
    fc.record({ verb: fc.constantFrom('claimOffer' as const, 'acquireFree' as const), executor: fc.constantFrom('carol', 'dave'), local: fc.nat({ max: 12 }) }),
    fc.record({ verb: fc.constant('withdrawOffer' as const) }),
    fc.record({
      verb: fc.constantFrom('withdrawReturn' as const, 'offerReturn' as const, 'reofferTaken' as const, 'closeOneWay' as const, 'released' as const),
      token,
    }),
    fc.record({ verb: fc.constant('broken' as const) }),
  );
};

describe('the travelling lease chain against its model', () => {
  it('every verb from every record does what the model says, and every move it makes is one the judge accepts', () => {
    fc.assert(
      fc.property(
        recordArb.chain((record) => fc.tuple(fc.constant(record), verbArb(record))),
        ([record, v]) => {
          const move = apply(record, v);
          const expected = model(record, v);
          if (!expected.ok) {
            expect(move).toMatchObject({ ok: false, code: expected.code });
            // A refusal always names the cycle, so a user with several cycles knows which one refused.
            expect(move.ok ? '' : move.reason).toContain(CYCLE);
            return;
          }
          if (!move.ok) throw new Error(`refused: ${move.reason}`);
          const next = move.record;
          if (expected.same) {
            expect(next).toBe(record);
            return;
          }
          expect(next.state).toBe(expected.state);
          expect(next.at).toBe(AT);
          if (expected.holder === 'none') expect(next.holder).toBeNull();
          if (expected.holder === 'kept') expect(next.holder).toEqual(record.holder);
          if (expected.holder === 'new' && 'local' in v) {
            const token = Math.max(record.last_token, v.local) + 1;
            expect(next.holder).toEqual({ executor: v.executor, token });
            expect(next.last_token).toBe(token);
          } else {
            expect(next.last_token).toBe(record.last_token);
          }
          if (v.verb === 'offerReturn') expect(next.manifest).toBe(manifest);
          expect(judgeLeaseMove(record, next)).toBeNull();
        },
      ),
      { numRuns: 400 },
    );
  });

  it('a refusal says what the lease is and who holds it', () => {
    const taken = { ...offered(CYCLE, 4, { executor: 'bob', token: 4 }, manifest, AT), state: 'taken' as const };
    const reason = (move: LeaseMove) => (move.ok ? '' : move.reason);
    expect(reason(claimOffer(taken, 'c', AT))).toBe(`the lease of cycle ${CYCLE} is taken by 'bob' (token 4)`);
    expect(reason(acquireFree({ ...taken, state: 'closed', holder: null }, 'c', AT))).toBe(`the lease of cycle ${CYCLE} is closed`);
    expect(reason(claimOffer({ ...taken, state: 'withdrawn', holder: null }, 'c', AT))).toBe(
      `the offer of cycle ${CYCLE} was withdrawn by its source (\`handoff cancel\` there): there is nothing to take`,
    );
    expect(reason(withdrawReturn({ ...taken, state: 'return_offered' }, 3, AT))).toBe(`token 3 did not offer the return of cycle ${CYCLE} by 'bob' (token 4)`);
    expect(reason(letGo(taken, 'released', null, AT))).toBe(`token none does not hold the lease of cycle ${CYCLE} by 'bob' (token 4)`);
    expect(reason(offerReturn(taken, 3, manifest, AT))).toBe(`token 3 does not hold the lease of cycle ${CYCLE} (taken, holder 'bob')`);
    expect(reason(offerReturn({ ...taken, state: 'released', holder: null }, 3, manifest, AT))).toBe(
      `token 3 does not hold the lease of cycle ${CYCLE} (released)`,
    );
    expect(reason(reofferTaken(taken, 3, AT))).toBe(`token 3 does not hold the lease of cycle ${CYCLE} (taken)`);
    expect(reason(closeOneWay(taken, 3, AT))).toBe(`token 3 does not hold the lease of cycle ${CYCLE} (taken, holder 'bob' token 4)`);
    expect(reason(closeOneWay({ ...taken, state: 'broken', holder: null }, 3, AT))).toBe(`token 3 does not hold the lease of cycle ${CYCLE} (broken)`);
  });
});

describe('judging a forged record', () => {
  const taken = { ...offered(CYCLE, 4, { executor: 'bob', token: 4 }, manifest, AT), state: 'taken' as const };
  const returned = { ...taken, state: 'return_offered' as const };

  it.each([
    ['another cycle', taken, { ...taken, cycle: 'other' }, 'a record of cycle other follows one of cycle ' + CYCLE],
    ['a move the table lacks', { ...taken, state: 'closed' as const }, taken, 'closed -> taken is not a move of the lease chain'],
    ['a lowered last_token', taken, { ...taken, state: 'released' as const, holder: null, last_token: 2 }, 'taken -> released lowers last_token from 4 to 2'],
    [
      'a withdrawn return by someone else',
      returned,
      { ...taken, holder: { executor: 'eve', token: 4 } },
      'return_offered -> taken (a withdrawn return) is not made by the holder of token 4',
    ],
    ['a withdrawn return with a new token', returned, { ...taken, last_token: 5 }, 'return_offered -> taken (a withdrawn return) changes last_token (4 -> 5)'],
    [
      'a take naming nobody',
      { ...taken, state: 'released' as const, holder: null },
      { ...taken, holder: null, last_token: 5 },
      'released -> taken names no holder',
    ],
    [
      'a take whose last_token is not its token',
      { ...taken, state: 'released' as const, holder: null },
      { ...taken, holder: { executor: 'c', token: 6 }, last_token: 7 },
      'released -> taken gives token 6 but records last_token 7',
    ],
    [
      'a close from a return naming an old token',
      returned,
      { ...returned, state: 'closed' as const, holder: { executor: 'p', token: 4 } },
      'return_offered -> closed gives token 4, already issued (last_token was 4)',
    ],
    [
      'a hand-back by someone else',
      taken,
      { ...returned, holder: { executor: 'bob', token: 3 } },
      'taken -> return_offered is not made by the holder of token 4',
    ],
    ['a hand-back by someone when nobody held it', { ...taken, holder: null }, returned, 'taken -> return_offered is not made by the holder of token none'],
    ['a release naming a holder', taken, { ...taken, state: 'released' as const }, 'taken -> released names a holder where nobody holds'],
    ['an undone accept naming a holder', taken, { ...taken, state: 'offered' as const }, 'taken -> offered (an undone accept) names a holder'],
  ])('refuses %s, saying why', (_name, previous, next, why) => {
    expect(judgeLeaseMove(previous, next)).toBe(why);
  });

  it('accepts a re-offer of a later revision and a withdrawn return by its own holder', () => {
    const offer = offered(CYCLE, 4, null, manifest, AT);
    expect(judgeLeaseMove(offer, { ...offer, manifest: { path: 'r2/manifest.json', sha256: 'b'.repeat(64) } })).toBeNull();
    expect(judgeLeaseMove(returned, taken)).toBeNull();
  });
});

describe('where the lease lives', () => {
  it('names the refs of a cycle: the lease chain, the packages and the checkpoint branch of each leg', () => {
    expect(leaseRef(CYCLE)).toBe(`refs/handoff/lease/${CYCLE}`);
    expect(packagesRef(CYCLE)).toBe(`refs/handoff/packages/${CYCLE}`);
    expect(checkpointRef(CYCLE, 'out')).toBe(`refs/heads/handoff/${CYCLE}`);
    expect(checkpointRef(CYCLE, 'return')).toBe(`refs/heads/handoff/${CYCLE}-return`);
  });

  it('writes a record as indented JSON ending in a newline, read back unchanged', () => {
    const record = offered(CYCLE, 4, null, manifest, AT);
    const text = serializeLeaseRecord(record);
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).toContain('\n  "cycle"');
    expect(JSON.parse(text)).toEqual(record);
  });

  it('the lease travels only while the cycle is offered, taken or handed back through a remote', () => {
    const travelling = { ...cycle(), remote: { name: 'origin', lease_head: null } };
    const travelsIn = STATES.filter((state) => leaseTravels(travelling, state));
    expect(travelsIn).toEqual(['HANDOFF_READY', 'TAKEOVER', 'RETURN_HANDOFF_READY']);
    expect(STATES.some((state) => leaseTravels(cycle(), state) || leaseTravels(null, state))).toBe(false);
  });

  it('a local lease verb on an offer through the remote is refused, naming what works there', () => {
    const travelling = { ...cycle(), remote: { name: 'origin', lease_head: null } };
    const id = travelling.id;
    const out = travellingLeaseRefusal(travelling, 'HANDOFF_READY', 'acquire');
    expect(out).toMatchObject({
      code: 'lease_travels',
      data: { cycle: id, remote: 'origin', ref: `refs/handoff/lease/${id}`, state: 'HANDOFF_READY' },
    });
    expect(out?.error?.message).toBe(
      `the lease of cycle ${id} is on offer on the remote 'origin' (refs/handoff/lease/${id}, HANDOFF_READY): while it is on offer a \`handoff lease acquire\` has nothing to move`,
    );
    expect(out?.error?.hint).toBe(
      `a receiver takes it with \`handoff accept ${id} --from origin\`; the source withdraws it with \`handoff cancel\`; see it with \`handoff status\` or \`git fetch origin refs/handoff/lease/${id}\``,
    );
    const back = travellingLeaseRefusal(travelling, 'RETURN_HANDOFF_READY', 'break');
    expect(back?.error?.hint).toMatch(/^the primary takes the work back with `handoff accept .* --return` in the source checkout/);
    expect(travellingLeaseRefusal(travelling, 'TAKEOVER', 'release')).toBeNull();
    expect(travellingLeaseRefusal(cycle(), 'HANDOFF_READY', 'release')).toBeNull();
    expect(travellingLeaseRefusal(null, 'HANDOFF_READY', 'release')).toBeNull();
  });
});
