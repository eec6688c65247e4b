import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stateOf, step, type Cycle, type RemoteLeaseRecord } from '../../../protocol/index.js';
import { bodyOf, Harness, importedCycle, SCRIPTS } from './machine-harness.js';

/** A workspace the daemon drove into one of the scripted places. */
function placed(script: string): Harness {
  const h = new Harness();
  for (const intent of SCRIPTS[script] ?? []) {
    h.advance(7);
    h.send(bodyOf(intent, h.at, h.context));
  }
  h.advance(7);
  return h;
}

const cycleOf = (h: Harness): Cycle => {
  expect(h.context.cycle).not.toBeNull();
  return h.context.cycle as Cycle;
};

/** What the chain says of the lease of `h`'s cycle. */
function chainSays(h: Harness, state: RemoteLeaseRecord['state'], holder: RemoteLeaseRecord['holder'], lastToken: number) {
  const lease: RemoteLeaseRecord = {
    schema_version: 1,
    cycle: cycleOf(h).id,
    state,
    holder,
    last_token: lastToken,
    manifest: { path: 'manifest.json', sha256: 'a'.repeat(64) },
    at: new Date(h.at).toISOString(),
  };
  return { type: 'REMOTE_LEASE', lease, lease_head: `r${h.at}`, return_drain: null } as const;
}

describe('the lease verbs of its holder', () => {
  it('renew and release answer with the token they were given; the lease is renewed at the step, then free with that token spent', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 120 }), (rounds, later) => {
        const h = new Harness();
        for (let token = 1; token < rounds; token += 1) {
          h.send({ type: 'LEASE_ACQUIRE', executor: 'local' });
          h.send({ type: 'LEASE_RELEASE', token });
        }
        const acquired = h.send({ type: 'LEASE_ACQUIRE', executor: 'agent' });
        expect([acquired.code, acquired.data]).toEqual(['lease_acquired', { token: rounds }]);
        h.advance(later);
        const renewed = h.send({ type: 'LEASE_RENEW', token: rounds });
        expect([renewed.code, renewed.data, renewed.changed]).toEqual(['lease_renewed', { token: rounds }, true]);
        expect(h.context.lease.holder).toMatchObject({ executor: 'agent', token: rounds, renewed_at: new Date(h.at).toISOString() });
        const released = h.send({ type: 'LEASE_RELEASE', token: rounds });
        expect([released.code, released.data, released.changed]).toEqual(['lease_released', { token: rounds }, true]);
        expect([h.context.lease.holder, h.context.lease.last_token]).toEqual([null, rounds]);
      }),
      { numRuns: 20 },
    );
  });
});

describe('LEASE_HEAD: the head of the lease chain the daemon last wrote or read', () => {
  it('in every place, moves the cycle to that head and says changed only when the head is new; without a chain it changes nothing', () => {
    for (const script of Object.keys(SCRIPTS)) {
      const h = placed(script);
      const { cycle } = h.context;
      const remote = cycle?.remote ?? null;
      for (const head of new Set([remote?.lease_head ?? 'h0', 'h-new'])) {
        const { next, outcome } = step(h.scope, h.snapshot, { type: 'LEASE_HEAD', lease_head: head, at: h.at, entropy: 'k3f7qa' });
        const moved = remote !== null && remote.lease_head !== head;
        expect(outcome, `${script}, head ${head}`).toEqual({ code: 'ok', message: null, hint: null, data: null, changed: moved });
        expect(next.context.cycle).toEqual(remote === null ? cycle : { ...cycle, remote: { name: remote.name, lease_head: head } });
        expect(stateOf(next)).toBe(h.state);
      }
    }
  });
});

describe('accepts', () => {
  it('a handoff accepted names its receiver on the cycle: who, in which checkout, with the token it was granted', () => {
    for (const script of ['handoff ready', 'handoff ready (remote)']) {
      const h = placed(script);
      const before = cycleOf(h);
      const spent = h.context.lease.last_token;
      const outcome = h.send({ type: 'HANDOFF_ACCEPTED', executor: 'laptop-c', receiver_root: '/elsewhere', token: null });
      const token = spent + 1;
      expect([h.state, outcome.code, outcome.data], script).toEqual(['TAKEOVER', 'accepted', { token }]);
      expect(h.context.cycle).toEqual({ ...before, receiver: { executor: 'laptop-c', root: '/elsewhere', token } });
      expect(h.context.lease.holder).toMatchObject({ executor: 'laptop-c', token });
    }
  });

  it('the return accepted closes the cycle with the receiver who worked on it still named', () => {
    for (const script of ['return ready', 'return ready (remote)']) {
      const h = placed(script);
      const before = cycleOf(h);
      expect(before.receiver, script).not.toBeNull();
      const outcome = h.send({ type: 'RETURN_ACCEPTED', executor: 'primary', token: null });
      expect([h.state, outcome.code, outcome.data], script).toEqual(['CLOSED', 'accepted', { token: h.context.lease.last_token }]);
      expect(h.context.cycle, script).toEqual(before);
      expect(h.context.lease.holder?.executor).toBe('primary');
    }
  });
});

describe('IMPORT_TAKEOVER: a cycle another machine offered, imported by the receiver that won the chain', () => {
  it("holds it with the chain's token, or the next one here when that is already spent: never a token this workspace handed out before", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 1, max: 8 }), fc.boolean(), (rounds, offered, broken) => {
        const h = new Harness();
        for (let token = 1; token <= rounds; token += 1) {
          h.send({ type: 'LEASE_ACQUIRE', executor: 'local' });
          h.send({ type: 'LEASE_RELEASE', token });
        }
        if (broken) h.send({ type: 'LEASE_BREAK', reason: 'gone' });
        h.advance(7);
        const { last_token: spent, last_break } = h.context.lease;
        const cycle = importedCycle(h.at);
        const outcome = h.send({ type: 'IMPORT_TAKEOVER', cycle, executor: 'laptop-b', token: offered, receiver_root: '/repo' });
        const token = Math.max(offered, spent + 1);
        const at = new Date(h.at).toISOString();
        expect(token).toBeGreaterThan(spent);
        expect([h.state, outcome.code, outcome.data]).toEqual(['TAKEOVER', 'accepted', { token }]);
        expect(h.context.lease).toEqual({
          holder: { executor: 'laptop-b', token, acquired_at: at, renewed_at: at },
          last_token: token,
          offered: false,
          last_break,
        });
        expect(h.context.cycle).toEqual({ ...cycle, receiver: { executor: 'laptop-b', root: '/repo', token } });
        expect(h.context.blocked).toBeNull();
      }),
      { numRuns: 40 },
    );
  });
});

describe('REMOTE_LEASE taken: the lease was taken through the chain', () => {
  it('the source follows: the taker holds it, named as the receiver with the checkout it took it in (none when on another machine)', () => {
    for (const script of ['handoff ready', 'handoff ready (remote)']) {
      for (const root of [undefined, null, '/clone-b']) {
        const h = placed(script);
        const before = cycleOf(h);
        const { last_token: spent, last_break } = h.context.lease;
        const taken = chainSays(h, 'taken', { executor: 'far', token: spent + 1 }, spent + 3);
        const outcome = h.send(root === undefined ? taken : { ...taken, receiver_root: root });
        const at = new Date(h.at).toISOString();
        expect([h.state, outcome.code, outcome.data], `${script}, root ${root}`).toEqual(['TAKEOVER', 'ok', { moved_to: 'far' }]);
        expect(h.context.lease).toEqual({
          holder: { executor: 'far', token: spent + 1, acquired_at: at, renewed_at: at },
          last_token: spent + 3,
          offered: false,
          last_break,
        });
        expect(h.context.cycle).toEqual({
          ...before,
          receiver: { executor: 'far', root: root ?? null, token: spent + 1 },
          remote: before.remote === null ? null : { ...before.remote, lease_head: taken.lease_head },
        });
      }
    }
  });
});

describe('an undone accept (its checkout failed, here or on the chain)', () => {
  it('answers with the token it undid (none when nobody held the lease any more) and the state it went back to, that token spent', () => {
    for (const script of ['takeover', 'takeover (remote)', 'takeover imported']) {
      for (const how of ['here', 'chain', 'chain after a break'] as const) {
        for (const ahead of [0, 2]) {
          const h = placed(script);
          if (how === 'chain after a break') h.send({ type: 'LEASE_BREAK', reason: 'receiver gone' });
          const before = cycleOf(h);
          const { holder, last_token: spent, last_break } = h.context.lease;
          const imported = script === 'takeover imported';
          const held = holder?.token ?? null;
          const outcome =
            how === 'here'
              ? h.send({ type: 'ACCEPT_UNDONE', token: held ?? 0, imported, reason: 'checkout failed', lease_head: null })
              : h.send(chainSays(h, 'offered', null, spent + ahead));
          const back = imported ? 'NORMAL' : 'HANDOFF_READY';
          const label = `${script}, ${how}, ${ahead} ahead`;
          expect([h.state, outcome], label).toEqual([back, { code: 'ok', message: null, hint: null, data: { undone: held, state: back }, changed: true }]);
          const lastToken = how === 'here' ? spent : spent + ahead;
          expect(h.context.lease, label).toEqual({ holder: null, last_token: lastToken, offered: !imported, last_break });
          expect(h.context.cycle, label).toEqual(
            imported
              ? null
              : {
                  ...before,
                  receiver: null,
                  return_drain: null,
                  remote: before.remote && { ...before.remote, lease_head: how === 'here' ? before.remote.lease_head : `r${h.at}` },
                },
          );
        }
      }
    }
  });
});
