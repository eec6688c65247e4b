import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { leaseRules, type LeaseState } from '../../../protocol/index.js';

const AT = '2026-08-20T10:00:00.000Z';
const LATER = '2026-08-20T11:00:00.000Z';
const held = (executor = 'alice', token = 4): LeaseState => leaseRules.grant({ ...leaseRules.FREE_LEASE, last_token: token - 1 }, executor, AT);

function refusal(decision: leaseRules.LeaseDecision) {
  if (decision.ok) throw new Error('expected a refusal');
  return decision;
}

function granted(decision: leaseRules.LeaseDecision) {
  if (!decision.ok) throw new Error(`expected a lease: ${decision.message}`);
  return decision.lease;
}

describe('lease rules', () => {
  it('every grant hands out a token above every token before it, and stales the previous holder', () => {
    fc.assert(
      fc.property(fc.array(fc.option(fc.nat({ max: 50 }), { nil: null }), { minLength: 1, maxLength: 12 }), (issued) => {
        let lease = leaseRules.FREE_LEASE;
        const seen: number[] = [];
        for (const [i, token] of issued.entries()) {
          const before = lease;
          lease = leaseRules.grant(lease, `e${i}`, AT, token);
          const holder = lease.holder;
          expect(holder?.token).toBe(Math.max(token ?? 0, before.last_token + 1));
          expect(seen.every((t) => t < (holder?.token ?? 0))).toBe(true);
          expect(lease).toMatchObject({ last_token: holder?.token, offered: false });
          if (before.holder !== null) expect(refusal(leaseRules.renew(lease, before.holder.token, LATER)).code).toBe('stale_token');
          seen.push(holder?.token ?? 0);
        }
      }),
    );
  });

  it('a remote-issued token is used as is when it is fresh', () => {
    expect(leaseRules.grant(held('alice', 4), 'bob', LATER, 9).holder).toEqual({ executor: 'bob', token: 9, acquired_at: LATER, renewed_at: LATER });
    expect(leaseRules.grant(held('alice', 4), 'bob', LATER, 2).holder?.token).toBe(5);
  });

  describe('acquire', () => {
    it('gives a free lease to the first comer with the next token', () => {
      const lease = granted(leaseRules.acquire({ ...leaseRules.FREE_LEASE, last_token: 7 }, 'alice', AT));
      expect(lease.holder).toEqual({ executor: 'alice', token: 8, acquired_at: AT, renewed_at: AT });
    });

    it('refuses a held lease and names the holder, its token and since when', () => {
      const refused = refusal(leaseRules.acquire(held('alice', 4), 'bob', LATER));
      expect(refused.code).toBe('lease_held');
      expect(refused.message).toBe(`the lease is held by 'alice' (token 4) since ${AT}`);
      expect(refused.hint).toMatch(/handoff lease break/);
    });

    it('refuses a lease on offer: it is taken only through verification', () => {
      const refused = refusal(leaseRules.acquire({ ...leaseRules.FREE_LEASE, offered: true }, 'bob', AT));
      expect(refused.code).toBe('wrong_state');
      expect(refused.message).toMatch(/on offer/);
      expect(refused.hint).toMatch(/handoff accept/);
    });
  });

  describe('renew and release', () => {
    it('the holder renews with its token: the renewal time moves, nothing else', () => {
      const lease = held('alice', 4);
      expect(granted(leaseRules.renew(lease, 4, LATER))).toEqual({ ...lease, holder: { ...lease.holder, renewed_at: LATER } });
    });

    it('the holder releases with its token: nobody holds it, the token counter stays', () => {
      const lease = granted(leaseRules.release(held('alice', 4), 4));
      expect(lease).toMatchObject({ holder: null, last_token: 4 });
      expect(granted(leaseRules.acquire(lease, 'bob', LATER)).holder?.token).toBe(5);
    });

    it.each([
      ['renew', (lease: LeaseState, token: number) => leaseRules.renew(lease, token, LATER)],
      ['release', (lease: LeaseState, token: number) => leaseRules.release(lease, token)],
    ])('%s refuses a stale token and says who holds the lease', (_name, act) => {
      const wrong = refusal(act(held('alice', 4), 3));
      expect(wrong.code).toBe('stale_token');
      expect(wrong.message).toBe("token 3 is not the current lease token: the current token belongs to 'alice'");
      expect(wrong.hint).toMatch(/handoff lease show/);
      expect(refusal(act(leaseRules.FREE_LEASE, 0)).message).toBe('token 0 is not the current lease token: nobody holds the lease');
    });
  });

  describe('breakLease', () => {
    it('frees the lease and records who lost it, when and why', () => {
      const broken = leaseRules.breakLease(held('alice', 4), 'laptop lost', LATER);
      expect(broken).toMatchObject({ holder: null, last_token: 4, last_break: { at: LATER, reason: 'laptop lost', executor: 'alice', token: 4 } });
    });

    it('records an empty holder when nobody held it', () => {
      expect(leaseRules.breakLease(leaseRules.FREE_LEASE, 'cleanup', AT).last_break).toEqual({ at: AT, reason: 'cleanup', executor: null, token: null });
    });
  });
});
