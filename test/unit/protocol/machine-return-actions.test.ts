import { describe, expect, it } from 'vitest';
import { newDrain, type RemoteLeaseRecord } from '../../../protocol/index.js';
import { Harness, VERIFIED, walk } from './machine-harness.js';

/**
 * The return leg's actions (protocol/machine/return-actions.ts), each in the places the machine runs it:
 * what it answers and what it leaves in the context a later step reads (holder, receiver, return drain, remote head).
 */
const iso = (ms: number) => new Date(ms).toISOString();

/** A harness standing where the named script of machine-harness.ts leaves the machine. */
function placed(script: string): Harness {
  const h = new Harness();
  walk([script, [], 'emergency-return'], ({ after, at }) => {
    h.snapshot = after;
    h.at = at;
  });
  h.advance(60);
  return h;
}

/** Another harness at the same place and time (a snapshot is never changed in place, only replaced). */
function again(place: Harness): Harness {
  const h = new Harness();
  h.snapshot = place.snapshot;
  h.at = place.at;
  return h;
}

/** The chain's record of this cycle as another machine pushed it. */
function record(h: Harness, state: RemoteLeaseRecord['state'], holder: RemoteLeaseRecord['holder'], last_token: number): RemoteLeaseRecord {
  return {
    schema_version: 1,
    cycle: h.context.cycle?.id ?? '',
    state,
    holder,
    last_token,
    manifest: { path: 'manifest.json', sha256: 'a'.repeat(64) },
    at: iso(h.at),
  };
}

describe('`handoff return` (startReturn)', () => {
  it('from the holder after the lease changed hands during the drain: takes the fence over, keeps the drain and says so', () => {
    const h = placed('returning');
    const drain = h.context.cycle?.return_drain;
    h.send({ type: 'LEASE_BREAK', reason: 'the receiver is gone' });
    h.send({ type: 'LEASE_ACQUIRE', executor: 'rescuer' });
    const token = h.context.lease.holder?.token ?? 0;
    expect(h.send({ type: 'RETURN_START', token, wait: true })).toEqual({
      code: 'return_started',
      message: null,
      hint: null,
      data: { refenced: true },
      changed: true,
    });
    expect(h.snapshot.value).toEqual({ TAKEOVER: 'returning' });
    expect([h.context.cycle?.receiver, h.context.cycle?.return_drain]).toEqual([{ executor: 'rescuer', root: '/clone', token }, drain]);
    // Again from the same holder: nothing to take over.
    expect(h.send({ type: 'RETURN_START', token, wait: false })).toMatchObject({ code: 'return_started', data: null, changed: false });
  });
});

/** Where a return leg can be cancelled, and whether its offer already went out through the remote (only the chain withdraws it then). */
const CANCELLABLE: readonly { readonly name: string; readonly place: () => Harness; readonly remote: boolean; readonly travels: boolean }[] = [
  { name: 'returning (no remote)', place: () => placed('returning'), remote: false, travels: false },
  { name: 'return blocked (no remote)', place: () => placed('return blocked'), remote: false, travels: false },
  {
    name: 'returning (out leg through the remote)',
    place: () => {
      const h = placed('takeover (remote)');
      h.send({ type: 'RETURN_START', token: h.context.lease.holder?.token ?? 0, wait: false });
      return h;
    },
    remote: true,
    travels: false,
  },
  { name: 'returning, its offer out on the remote', place: () => placed('return offered (remote)'), remote: true, travels: true },
  { name: 'RETURN_HANDOFF_READY (remote)', place: () => placed('return ready (remote)'), remote: true, travels: true },
];

describe('`handoff cancel` of a return leg (cancelReturn)', () => {
  it('ends the leg back in TAKEOVER held; the chain’s withdrawn record becomes the remote head, nothing else moves it', () => {
    for (const { name, place, remote: travelled, travels } of CANCELLABLE) {
      const start = place();
      for (const withdrawn of [undefined, null, 'w9']) {
        const h = again(start);
        const before = h.context;
        const cycle = before.cycle;
        const drain = cycle?.return_drain ?? null;
        const outcome = h.send({ type: 'CANCEL', reason: 'the primary is back', ...(withdrawn === undefined ? {} : { withdrawn }) });
        const label = `${name}, withdrawn ${String(withdrawn)}`;
        if (travels && withdrawn !== 'w9') {
          expect([outcome.code, outcome.changed, h.context], label).toEqual(['wrong_state', false, before]);
          continue;
        }
        expect([drain === null, cycle?.remote == null], label).toEqual([false, !travelled]);
        expect([h.snapshot.value, outcome.code, outcome.data], label).toEqual([
          { TAKEOVER: 'held' },
          'cancelled',
          {
            cycle: cycle?.id,
            leg: 'return',
            step: drain?.waited === null ? null : 'inspect',
            blocked: before.blocked,
            kept_ref: null,
            reason: 'the primary is back',
            at: iso(h.at),
            state: 'TAKEOVER',
          },
        ]);
        const remote = cycle?.remote ?? null;
        expect(h.context.cycle, label).toEqual({
          ...cycle,
          return_drain: null,
          abandoned_return: drain,
          remote: withdrawn === 'w9' && remote !== null ? { ...remote, lease_head: 'w9' } : remote,
        });
        expect([h.context.lease, h.context.cancelled_at, h.context.blocked], label).toEqual([{ ...before.lease, offered: false }, iso(h.at), null]);
      }
    }
  });
});

describe('a return the holder offered on another machine (applyRemoteReturn)', () => {
  it('is on offer here too: RETURN_HANDOFF_READY with the chain’s return drain, and its head where the cycle travels', () => {
    for (const script of ['takeover', 'takeover (remote)', 'takeover imported', 'returning']) {
      const h = placed(script);
      const before = h.context;
      const holder = before.lease.holder;
      const drain = newDrain('return', true, iso(h.at - 5_000));
      const outcome = h.send({
        type: 'REMOTE_LEASE',
        lease: record(h, 'return_offered', holder, before.lease.last_token),
        lease_head: 'r-return',
        return_drain: drain,
        receiver_root: null,
      });
      expect([h.state, outcome], script).toEqual(['RETURN_HANDOFF_READY', { code: 'ok', message: null, hint: null, data: null, changed: true }]);
      const remote = before.cycle?.remote ?? null;
      expect([h.context.lease, h.context.cycle], script).toEqual([
        { ...before.lease, offered: true },
        { ...before.cycle, return_drain: drain, remote: remote === null ? null : { ...remote, lease_head: 'r-return' } },
      ]);
    }
  });
});

/** RETURN_HANDOFF_READY as the chain can find it, and who may hold the lease there afterwards. */
const OFFERED: readonly { readonly name: string; readonly place: () => Harness; readonly heldByReturner: boolean }[] = [
  { name: 'return ready (remote)', place: () => placed('return ready (remote)'), heldByReturner: true },
  { name: 'return ready (no remote)', place: () => placed('return ready'), heldByReturner: true },
  {
    name: 'return ready, the lease broken since',
    heldByReturner: false,
    place: () => {
      const h = placed('return ready (remote)');
      h.send({ type: 'LEASE_BREAK', reason: 'the laptop is gone' });
      return h;
    },
  },
  {
    // The drain's report is fenced by the lease, the return leg by the token that started it: they part here.
    name: 'return ready by a holder who took the lease during the drain',
    heldByReturner: false,
    place: () => {
      const h = placed('takeover (remote)');
      h.send({ type: 'RETURN_START', token: h.context.lease.holder?.token ?? 0, wait: false });
      h.send({ type: 'LEASE_BREAK', reason: 'the receiver is gone' });
      h.send({ type: 'LEASE_ACQUIRE', executor: 'rescuer' });
      h.send({ type: 'RETURN_READY', token: h.context.lease.holder?.token ?? 0, checkpoint: VERIFIED });
      return h;
    },
  },
];

describe('a return withdrawn on the chain (followWithdrawnReturn)', () => {
  it('abandons the leg here too; the lease is the record holder’s, kept as it was only when that is who holds it and started the leg', () => {
    for (const { name, place, heldByReturner } of OFFERED) {
      const probe = place();
      expect(probe.state, name).toBe('RETURN_HANDOFF_READY');
      const { lease, cycle } = probe.context;
      const returner = cycle?.receiver ?? null;
      const candidates = [
        { who: 'the returner', holder: returner === null ? null : { executor: returner.executor, token: returner.token } },
        { who: 'the lease holder', holder: lease.holder === null ? null : { executor: lease.holder.executor, token: lease.holder.token } },
        { who: 'another machine', holder: { executor: 'far', token: lease.last_token + 1 } },
      ];
      for (const { who, holder } of candidates) {
        if (holder === null) continue;
        const kept = heldByReturner && who !== 'another machine';
        for (const [last, root] of [
          [holder.token, undefined],
          [lease.last_token + 2, null],
          [holder.token, '/far/clone'],
        ] as const) {
          const h = again(probe);
          const before = h.context;
          const label = `${name}: ${who}, last ${last}, root ${String(root)}`;
          const outcome = h.send({
            type: 'REMOTE_LEASE',
            lease: record(h, 'taken', holder, last),
            lease_head: 'r-withdrawn',
            return_drain: null,
            ...(root === undefined ? {} : { receiver_root: root }),
          });
          expect([h.snapshot.value, outcome], label).toEqual([
            { TAKEOVER: 'held' },
            { code: 'ok', message: null, hint: null, data: { moved_to: holder.executor, return_withdrawn: true }, changed: true },
          ]);
          const lastToken = Math.max(before.lease.last_token, last);
          const remote = before.cycle?.remote ?? null;
          expect([h.context.lease, h.context.cycle], label).toEqual([
            kept
              ? { ...before.lease, last_token: lastToken, offered: false }
              : {
                  holder: { ...holder, acquired_at: iso(h.at), renewed_at: iso(h.at) },
                  last_token: lastToken,
                  offered: false,
                  last_break: before.lease.last_break,
                },
            {
              ...before.cycle,
              receiver: kept ? before.cycle?.receiver : { ...holder, root: root ?? null },
              return_drain: null,
              abandoned_return: before.cycle?.return_drain,
              remote: remote === null ? null : { ...remote, lease_head: 'r-withdrawn' },
            },
          ]);
        }
      }
    }
  });
});
