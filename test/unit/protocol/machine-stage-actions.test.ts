import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Harness, PAUSE, scripted } from './machine-harness.js';

const UNPAUSE = 'run `handoff unpause` (or remove the PAUSE file) first';
const pauseArb = fc.option(
  fc.record({
    path: fc.constantFrom('/repo/.session-handoff/PAUSE', '/home/ana/.local/state/session-handoff/PAUSE'),
    reason: fc.option(fc.constantFrom('lunch', 'release freeze', 'déjà (vu)'), { nil: null }),
  }),
  { nil: null },
);

describe('a verb refused while paused', () => {
  it('names the PAUSE file and its reason, word for word', () => {
    const h = new Harness();
    h.send({ type: 'PAUSE_SET', scope: 'workspace', pause: { ...PAUSE, reason: 'release freeze' } });
    expect(h.send({ type: 'NOW', reason: null, wait: false })).toEqual({
      code: 'paused_denied',
      message: 'paused by /repo/.session-handoff/PAUSE (release freeze)',
      hint: UNPAUSE,
      data: null,
      changed: false,
    });
    h.send({ type: 'PAUSE_SET', scope: 'workspace', pause: null });
    h.send({ type: 'PAUSE_SET', scope: 'global', pause: { ...PAUSE, path: '/state/PAUSE' } });
    expect(h.send({ type: 'PREPARE', reason: null })).toEqual({
      code: 'paused_denied',
      message: 'paused by /state/PAUSE',
      hint: UNPAUSE,
      data: null,
      changed: false,
    });
    expect(h.state).toBe('NORMAL');
  });

  it("names the workspace's pause when both are set, else whichever is, with its reason only when it has one", () => {
    fc.assert(
      fc.property(pauseArb, pauseArb, fc.constantFrom('NOW', 'PREPARE', 'LEASE_ACQUIRE'), (workspace, global, verb) => {
        fc.pre(workspace !== null || global !== null);
        const h = new Harness();
        if (workspace !== null) h.send({ type: 'PAUSE_SET', scope: 'workspace', pause: { ...PAUSE, ...workspace } });
        if (global !== null) h.send({ type: 'PAUSE_SET', scope: 'global', pause: { ...PAUSE, ...global } });
        const named = workspace ?? global;
        const outcome = h.send(
          verb === 'NOW'
            ? { type: 'NOW', reason: null, wait: false }
            : verb === 'PREPARE'
              ? { type: 'PREPARE', reason: null }
              : { type: 'LEASE_ACQUIRE', executor: 'ana' },
        );
        const reason = named?.reason === null || named === null ? '' : ` (${named.reason})`;
        expect(outcome).toEqual({ code: 'paused_denied', message: `paused by ${named?.path}${reason}`, hint: UNPAUSE, data: null, changed: false });
        expect([h.state, h.context.lease.holder]).toEqual(['NORMAL', null]);
      }),
      // A few hundred combinations in all: sixty draws meet each kind (one pause, the other, both; with and without a reason).
      { numRuns: 60 },
    );
  });
});

describe('a lease verb with a token that is not the holder’s', () => {
  const verbs = (token: number) =>
    [
      { type: 'RETURN_START', token, wait: false },
      { type: 'CLOSE_ONE_WAY', token },
      { type: 'ACCEPT_UNDONE', token, imported: false, reason: 'checkout failed', lease_head: null },
    ] as const;

  it('is refused naming who holds the lease, and changes nothing', () => {
    const h = scripted('takeover');
    const holder = h.context.lease.holder?.token ?? 0;
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 50 }).filter((token) => token !== holder),
        fc.nat(2),
        (token, which) => {
          const before = h.snapshot;
          expect(h.send(verbs(token)[which] ?? verbs(token)[0])).toEqual({
            code: 'stale_token',
            message: 'the token is not the current lease token',
            hint: "the lease is held by 'receiver'",
            data: null,
            changed: false,
          });
          expect(h.snapshot).toBe(before);
        },
      ),
    );
  });

  it('says nobody holds it once the lease was broken', () => {
    const h = scripted('takeover without holder');
    expect(h.send(verbs(h.context.lease.last_token)[0])).toEqual({
      code: 'stale_token',
      message: 'the token is not the current lease token',
      hint: 'nobody holds the lease',
      data: null,
      changed: false,
    });
    expect(h.state).toBe('TAKEOVER');
  });
});

describe('`handoff cancel` of a return on offer through the git remote', () => {
  it('is refused with the cycle and the accept the primary runs, and the return stays on offer', () => {
    const h = scripted('return offered (remote)');
    const id = h.context.cycle?.id ?? 'no cycle';
    const before = h.snapshot;
    expect(h.send({ type: 'CANCEL', reason: null })).toEqual({
      code: 'wrong_state',
      message: `the return of cycle ${id} is on offer through the git remote: the primary may be taking it back there`,
      hint: `the primary takes it back with \`handoff accept ${id} --return\` in the source checkout; \`handoff status\` here follows the remote`,
      data: null,
      changed: false,
    });
    expect(h.snapshot).toBe(before);
    expect(h.snapshot.value).toEqual({ TAKEOVER: 'returning' });
  });
});
