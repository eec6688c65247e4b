import type { LeaseHolder, LeaseState } from '../schemas/lease.schema.js';
import type { Code } from './codes.js';

export type { LeaseBreak, LeaseHolder, LeaseState } from '../schemas/lease.schema.js';

export const FREE_LEASE: LeaseState = { holder: null, last_token: 0, offered: false, last_break: null };

export type LeaseDecision =
  { readonly ok: true; readonly lease: LeaseState } | { readonly ok: false; readonly code: Code; readonly message: string; readonly hint: string };

/**
 * Hand the lease to `executor` with a fresh token; the previous holder's token becomes stale. A token
 * issued by the remote's lease chain is used as is when it is fresh; tokens never go down.
 */
export function grant(lease: LeaseState, executor: string, at: string, issued: number | null = null): LeaseState {
  const token = Math.max(issued ?? 0, lease.last_token + 1);
  return { ...lease, holder: { executor, token, acquired_at: at, renewed_at: at }, last_token: token, offered: false };
}

export function acquire(lease: LeaseState, executor: string, at: string): LeaseDecision {
  if (lease.holder !== null) {
    return {
      ok: false,
      code: 'lease_held',
      message: `the lease is held by '${lease.holder.executor}' (token ${lease.holder.token}) since ${lease.holder.acquired_at}`,
      hint: 'wait for the holder to release it, or an operator may run `handoff lease break --reason "…"`',
    };
  }
  if (lease.offered) {
    return {
      ok: false,
      code: 'wrong_state',
      message: 'the lease is on offer for a handoff and is taken only through verification',
      hint: 'take it with `handoff accept`, which verifies the checkpoint before granting the lease',
    };
  }
  return { ok: true, lease: grant(lease, executor, at) };
}

type Refusal = Extract<LeaseDecision, { ok: false }>;

function checkToken(lease: LeaseState, token: number): { ok: true; holder: LeaseHolder } | Refusal {
  if (lease.holder === null || lease.holder.token !== token) {
    const current = lease.holder === null ? 'nobody holds the lease' : `the current token belongs to '${lease.holder.executor}'`;
    return {
      ok: false,
      code: 'stale_token',
      message: `token ${token} is not the current lease token: ${current}`,
      hint: 'stop acting on this workspace; run `handoff lease show` to see who holds it',
    };
  }
  return { ok: true, holder: lease.holder };
}

export function renew(lease: LeaseState, token: number, at: string): LeaseDecision {
  const checked = checkToken(lease, token);
  if (!checked.ok) return checked;
  return { ok: true, lease: { ...lease, holder: { ...checked.holder, renewed_at: at } } };
}

export function release(lease: LeaseState, token: number): LeaseDecision {
  const checked = checkToken(lease, token);
  if (!checked.ok) return checked;
  return { ok: true, lease: { ...lease, holder: null } };
}

/** An operator's recorded override: the only way ownership moves without the holder. */
export function breakLease(lease: LeaseState, reason: string, at: string): LeaseState {
  const holder = lease.holder;
  return {
    ...lease,
    holder: null,
    last_break: { at, reason, executor: holder?.executor ?? null, token: holder?.token ?? null },
  };
}
