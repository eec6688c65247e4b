import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newDrain, type DrainProgress } from '../../../protocol/drain-plan.js';
import type { LeaseState } from '../../../protocol/lease-rules.js';
import { nextSteps, situationOf, type NextStep, type WaysOutInput } from '../../../protocol/ways-out.js';
import { STATES, type Cycle } from '../../../protocol/workspace-machine.js';

/**
 * The ways out of docs/concepts.md ("Ways out") from each situation, word for word: what `handoff
 * status` prints under "next". Built from plain data, so every situation is reached, also those a
 * short machine history seldom meets (no holder, a return fenced out, a return offered through a remote).
 */

const AT = '2026-08-20T10:00:00.000Z';
const ID = '20260820T100000Z-k3f7qa';

const drain = (leg: 'out' | 'return', change: Partial<DrainProgress> = {}): DrainProgress => ({ ...newDrain(leg, false, AT), ...change });
const waited = { waited: { at: AT, why: 'no_wait' as const } };
const record = (summary: Record<string, string>) => ({ at: AT, sha256: null, summary });
/** A return leg whose offer step published the lease through a git remote. */
const offeredReturn = drain('return', { ...waited, steps: { offer: record({ lease_head: 'abc' }) } });

function cycle(change: Partial<Cycle> = {}): Cycle {
  return {
    id: ID,
    started_at: AT,
    trigger: { kind: 'manual', reason: 'handoff now', readings: [] },
    profile: 'emergency-return',
    checkpoint: null,
    return_checkpoint: null,
    drain: drain('out', waited),
    receiver: { executor: 'emergency', root: '/clone', token: 2 },
    remote: null,
    return_drain: null,
    ...change,
  };
}

const held = (token: number, executor = 'emergency'): LeaseState => ({
  holder: { executor, token, acquired_at: AT, renewed_at: AT },
  last_token: token,
  offered: false,
  last_break: null,
});
const FREE: LeaseState = { holder: null, last_token: 2, offered: false, last_break: null };

function view(change: Partial<WaysOutInput>): WaysOutInput {
  return { state: 'NORMAL', paused: null, blocked: null, cycle: null, lease: FREE, pressure: null, ...change };
}

const way = (verb: NextStep['verb'], command: string | null, why: string, repo: string | null = null): NextStep => ({ verb, command, why, repo });

const resume = way('resume', 'handoff resume', 'fix the cause named above, then run `handoff resume`');
const cancel = (why: string, repo: string | null = null) => way('cancel', 'handoff cancel', `or \`handoff cancel\` ${why}`, repo);
const lost = way('lease break', 'handoff lease break --reason TEXT', 'or, if the holder is gone, an operator records `handoff lease break --reason TEXT`');

describe('the situation a workspace is in', () => {
  it('paused is a situation of its own in every state', () => {
    fc.assert(
      fc.property(fc.constantFrom(...STATES), fc.constantFrom('global' as const, 'workspace' as const), (state, scope) => {
        expect(situationOf(view({ state, paused: { scope }, cycle: cycle(), blocked: 'why' }))).toBe('paused');
      }),
    );
  });

  it('a state with nothing to refine is its own situation', () => {
    for (const state of ['NORMAL', 'PREPARE', 'HANDOFF_READY', 'RETURN_HANDOFF_READY', 'CLOSED'] as const) {
      expect(situationOf(view({ state, cycle: cycle(), blocked: 'why' }))).toBe(state);
    }
  });

  it('an evacuation waits for the agent until it said drained, the wait ended or nobody asked to wait', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.boolean(), fc.boolean(), (wasWaited, noWait, drained) => {
        const out = drain('out', {
          waited: wasWaited ? waited.waited : null,
          no_wait: noWait,
          drained_at: drained ? AT : null,
        });
        const waiting = !wasWaited && !noWait && !drained;
        expect(situationOf(view({ state: 'EVACUATE', cycle: cycle({ drain: out }) }))).toBe(
          waiting ? 'EVACUATE (waiting for the agent)' : 'EVACUATE (draining)',
        );
        expect(situationOf(view({ state: 'EVACUATE', cycle: cycle({ drain: out }), blocked: 'push rejected' }))).toBe('EVACUATE (blocked)');
      }),
    );
    expect(situationOf(view({ state: 'EVACUATE', cycle: null }))).toBe('EVACUATE (draining)');
  });

  it('a return leg goes on only under the token that started it', () => {
    const returning = (ret: DrainProgress, lease: LeaseState, blocked: string | null = null, receiver = cycle().receiver) =>
      situationOf(view({ state: 'TAKEOVER', cycle: cycle({ return_drain: ret, receiver }), lease, blocked }));
    const ret = drain('return');
    expect(situationOf(view({ state: 'TAKEOVER', cycle: cycle(), lease: held(2) }))).toBe('TAKEOVER (held)');
    expect(situationOf(view({ state: 'TAKEOVER', cycle: cycle(), lease: FREE }))).toBe('TAKEOVER (no holder)');
    expect(situationOf(view({ state: 'TAKEOVER', cycle: null, lease: held(2) }))).toBe('TAKEOVER (held)');
    expect(returning(ret, held(2))).toBe('TAKEOVER (returning, waiting for the agent)');
    expect(returning(drain('return', { no_wait: true }), held(2))).toBe('TAKEOVER (returning)');
    expect(returning(drain('return', { drained_at: AT }), held(2))).toBe('TAKEOVER (returning)');
    expect(returning(drain('return', waited), held(2))).toBe('TAKEOVER (returning)');
    expect(returning(ret, held(2), 'push rejected')).toBe('TAKEOVER (return blocked)');
    // Fenced out wins over blocked: the cause is the lease, not the drain.
    expect(returning(ret, FREE, 'push rejected')).toBe('TAKEOVER (return fenced out)');
    expect(returning(ret, held(3), 'push rejected')).toBe('TAKEOVER (return fenced out)');
    expect(returning(ret, held(2), null, null)).toBe('TAKEOVER (return fenced out)');
  });
});

describe('the ways on from each situation, word for word', () => {
  it('paused: unpause (with the scope it was set in), and cancel where cancelling ends something', () => {
    const unpause = way('unpause', 'handoff unpause', 'run `handoff unpause` when it is safe to go on');
    const unpauseGlobal = way('unpause', 'handoff unpause --global', 'run `handoff unpause --global` when it is safe to go on');
    const ends = cancel('ends what is under way without moving anything forward');
    const paused = (change: Partial<WaysOutInput>, scope: 'global' | 'workspace' = 'workspace') =>
      nextSteps(view({ paused: { scope }, cycle: cycle(), ...change }));
    expect(paused({ state: 'NORMAL' })).toEqual([unpause]);
    expect(paused({ state: 'NORMAL' }, 'global')).toEqual([unpauseGlobal]);
    for (const state of ['PREPARE', 'EVACUATE', 'HANDOFF_READY'] as const) expect(paused({ state }, 'global')).toEqual([unpauseGlobal, ends]);
    for (const state of ['TAKEOVER', 'RETURN_HANDOFF_READY', 'CLOSED'] as const) expect(paused({ state, lease: held(2) })).toEqual([unpause]);
    expect(paused({ state: 'TAKEOVER', lease: held(2), cycle: cycle({ return_drain: drain('return') }) })).toEqual([unpause, ends]);
    // A return offered through the remote is the primary's to take: the holder cannot withdraw it from here.
    expect(paused({ state: 'TAKEOVER', lease: held(2), cycle: cycle({ return_drain: offeredReturn }) })).toEqual([unpause]);
  });

  it('NORMAL: nothing to do, and says how real numbers arrive while none has', () => {
    expect(nextSteps(view({}))).toEqual([
      way('now', 'handoff now', 'nothing to do; connect an agent (`handoff install claude`) so real numbers arrive, or `handoff now` evacuates by hand'),
    ]);
    expect(nextSteps(view({ pressure: { percent: 12 } }))).toEqual([way('now', 'handoff now', 'nothing to do; `handoff now` evacuates by hand')]);
  });

  it('PREPARE: keep working and refresh the capsule; or evacuate; or cancel', () => {
    expect(nextSteps(view({ state: 'PREPARE' }))).toEqual([
      way('capsule set', 'handoff capsule set', 'keep working; refresh the capsule (objective, decisions, the one next action) with `handoff capsule set`'),
      way('now', 'handoff now', 'or `handoff now` evacuates at once'),
      way('cancel', 'handoff cancel', 'or `handoff cancel` goes back to NORMAL until a newer reading says otherwise'),
    ]);
  });

  it('EVACUATE: the agent says drained, the daemon drains, or a blocked drain is resumed; each may be given up', () => {
    const giveUp = cancel('gives this evacuation up');
    expect(nextSteps(view({ state: 'EVACUATE', cycle: cycle({ drain: drain('out') }) }))).toEqual([
      way('drained', 'handoff drained', 'the agent finishes only its current atomic step, then runs `handoff drained`'),
      giveUp,
    ]);
    expect(nextSteps(view({ state: 'EVACUATE', cycle: cycle() }))).toEqual([
      way('wait', null, 'wait: the daemon is checkpointing; nothing of yours is touched'),
      giveUp,
    ]);
    // The out leg's offer is withdrawn on the remote too: cancelling stays a way out while it travels.
    expect(nextSteps(view({ state: 'EVACUATE', cycle: cycle({ remote: { name: 'origin', lease_head: 'abc' } }), blocked: 'x' }))).toEqual([
      resume,
      cancel('gives this evacuation up if the cause cannot be fixed (the cycle is recorded as abandoned)'),
    ]);
    expect(nextSteps(view({ state: 'EVACUATE', cycle: null, blocked: 'x' }))).toEqual([
      resume,
      cancel('gives this evacuation up if the cause cannot be fixed (the cycle is recorded as abandoned)'),
    ]);
  });

  it('HANDOFF_READY: a receiver accepts where the offer can be taken; or it is withdrawn', () => {
    const withdraw = cancel('withdraws the offer if no receiver will come (on the remote too, unless a receiver took it first)');
    const here = `handoff accept ${ID}`;
    expect(nextSteps(view({ state: 'HANDOFF_READY', cycle: cycle({ receiver: null }) }))).toEqual([
      way(
        'accept',
        here,
        `a receiver verifies and takes over: \`${here}\` in this checkout or another checkout of this repository on this machine (no remote carries it)`,
      ),
      withdraw,
    ]);
    const remote = `handoff accept ${ID} --from origin`;
    expect(nextSteps(view({ state: 'HANDOFF_READY', cycle: cycle({ receiver: null, remote: { name: 'origin', lease_head: 'abc' } }) }))).toEqual([
      way('accept', remote, `a receiver verifies and takes over: \`${remote}\` in a clone of this repository (in this checkout: \`${here}\`)`),
      withdraw,
    ]);
    expect(nextSteps(view({ state: 'HANDOFF_READY' }))[0]?.command).toBe('handoff accept CYCLE');
  });

  describe('TAKEOVER (held)', () => {
    const ret = (token: number, repo: string | null) =>
      way('return', `handoff return --token ${token}`, 'the lease holder works, then hands back with `handoff return`', repo);
    const close = (token: number, repo: string | null) =>
      way('close --one-way', `handoff close --one-way --token ${token}`, 'the lease holder finishes the one-way cycle with `handoff close --one-way`', repo);

    it('the holder returns (in its checkout, with its token), or an operator breaks a lost lease', () => {
      expect(nextSteps(view({ state: 'TAKEOVER', cycle: cycle(), lease: held(2) }))).toEqual([ret(2, '/clone'), lost]);
      // Taken in another checkout of this machine: the remote it travelled on changes nothing here.
      expect(nextSteps(view({ state: 'TAKEOVER', cycle: cycle({ remote: { name: 'origin', lease_head: 'x' } }), lease: held(2) }))).toEqual([
        ret(2, '/clone'),
        lost,
      ]);
      expect(nextSteps(view({ state: 'TAKEOVER', cycle: cycle({ receiver: null }), lease: held(5) }))).toEqual([ret(5, null), lost]);
      expect(nextSteps(view({ state: 'TAKEOVER', cycle: null, lease: held(5) }))).toEqual([ret(5, null), lost]);
    });

    it('a one-way cycle closes first; an emergency-return one offers close only after its return leg was cancelled', () => {
      expect(nextSteps(view({ state: 'TAKEOVER', cycle: cycle({ profile: 'one-way' }), lease: held(2) }))).toEqual([
        close(2, '/clone'),
        ret(2, '/clone'),
        lost,
      ]);
      expect(nextSteps(view({ state: 'TAKEOVER', cycle: cycle({ abandoned_return: drain('return') }), lease: held(2) }))).toEqual([
        ret(2, '/clone'),
        way(
          'close --one-way',
          'handoff close --one-way --token 2',
          'or, if the return cannot be made, the lease holder ends the cycle here with `handoff close --one-way`',
          '/clone',
        ),
        lost,
      ]);
      expect(nextSteps(view({ state: 'TAKEOVER', cycle: cycle({ abandoned_return: null }), lease: held(2) }))).toEqual([ret(2, '/clone'), lost]);
    });

    it('taken on another machine: this checkout waits for it, or breaks the lease through the remote', () => {
      const away = cycle({ receiver: null, remote: { name: 'origin', lease_head: 'abc' }, profile: 'one-way' });
      expect(nextSteps(view({ state: 'TAKEOVER', cycle: away, lease: held(4, 'laptop-b') }))).toEqual([
        way('wait', null, "wait: 'laptop-b' works on another machine and hands back with `handoff return` there; this checkout follows the remote"),
        way(
          'lease break',
          'handoff lease break --reason TEXT',
          'or, if that machine is gone for good, an operator records `handoff lease break --reason TEXT` (written through to the remote)',
        ),
      ]);
    });
  });

  it('TAKEOVER (no holder): the next holder takes the lease', () => {
    expect(nextSteps(view({ state: 'TAKEOVER', cycle: cycle(), lease: FREE }))).toEqual([
      way(
        'lease acquire',
        'handoff lease acquire --as NAME',
        'nobody holds the lease: the next holder takes it with `handoff lease acquire --as NAME`, then returns',
      ),
    ]);
  });

  it('TAKEOVER (return fenced out): the lease is taken again, or its new holder carries the return on with its token', () => {
    const ends = cancel('ends the return leg');
    expect(nextSteps(view({ state: 'TAKEOVER', cycle: cycle({ return_drain: drain('return') }), lease: FREE }))).toEqual([
      way(
        'lease acquire',
        'handoff lease acquire --as NAME',
        'the lease left its holder during the return: take it with `handoff lease acquire --as NAME`, then run `handoff return`',
      ),
      ends,
    ]);
    expect(nextSteps(view({ state: 'TAKEOVER', cycle: cycle({ return_drain: drain('return') }), lease: held(3) }))).toEqual([
      way(
        'return',
        'handoff return --token 3',
        'the lease changed hands during the return: its holder runs `handoff return --token 3` to carry the return on',
        '/clone',
      ),
      ends,
    ]);
    expect(nextSteps(view({ state: 'TAKEOVER', cycle: cycle({ return_drain: offeredReturn }), lease: FREE })).map((n) => n.verb)).toEqual(['lease acquire']);
    expect(nextSteps(view({ state: 'TAKEOVER', cycle: cycle({ return_drain: offeredReturn }), lease: held(3) })).map((n) => n.verb)).toEqual(['return']);
  });

  it('TAKEOVER (returning): the agent says drained in the receiver checkout, the daemon drains, a blocked drain is resumed; each may be ended', () => {
    const back = cancel('ends the return leg (back to TAKEOVER)');
    const returning = (ret: DrainProgress, blocked: string | null = null) =>
      nextSteps(view({ state: 'TAKEOVER', cycle: cycle({ return_drain: ret }), lease: held(2), blocked }));
    expect(returning(drain('return'))).toEqual([
      way('drained', 'handoff drained', 'the agent finishes only its current atomic step, then runs `handoff drained`', '/clone'),
      back,
    ]);
    expect(returning(drain('return', waited))).toEqual([way('wait', null, 'wait: the return leg is checkpointing'), back]);
    expect(returning(drain('return'), 'push rejected')).toEqual([resume, cancel('ends the return leg (back to TAKEOVER; the lease stays with its holder)')]);
    // Its offer went out through the remote: from then on only the primary takes it (or it waits there).
    expect(returning(offeredReturn)).toEqual([way('wait', null, 'wait: the return leg is checkpointing')]);
  });

  describe('RETURN_HANDOFF_READY', () => {
    const acceptBack = (id = ID) =>
      way('accept --return', `handoff accept ${id} --return`, `the primary takes the work back into its work tree: \`handoff accept ${id} --return\``);
    const travelled = { remote: { name: 'origin', lease_head: 'abc' } };
    const inspected = drain('out', { ...waited, steps: { inspect: record({}) } });

    it('in the primary checkout: the primary accepts the return', () => {
      expect(nextSteps(view({ state: 'RETURN_HANDOFF_READY', cycle: cycle({ drain: inspected }) }))).toEqual([acceptBack()]);
      expect(nextSteps(view({ state: 'RETURN_HANDOFF_READY', cycle: null }))).toEqual([acceptBack('CYCLE')]);
      expect(
        nextSteps(view({ state: 'RETURN_HANDOFF_READY', cycle: cycle({ drain: inspected, ...travelled, return_drain: drain('return', waited) }) })),
      ).toEqual([acceptBack()]);
    });

    it("handed back through the remote from a receiver on this machine: its holder may withdraw it in the receiver's checkout", () => {
      const withdraw = way(
        'cancel',
        'handoff cancel',
        "or, if the primary will not come, `handoff cancel` in the receiver's checkout withdraws the return (on the remote first, refused with lease_held when the primary took it back first)",
        '/clone',
      );
      expect(nextSteps(view({ state: 'RETURN_HANDOFF_READY', cycle: cycle({ drain: inspected, return_drain: offeredReturn }) }))).toEqual([
        acceptBack(),
        withdraw,
      ]);
      expect(nextSteps(view({ state: 'RETURN_HANDOFF_READY', cycle: cycle({ drain: inspected, ...travelled, return_drain: drain('return') }) }))).toEqual([
        acceptBack(),
      ]);
      expect(nextSteps(view({ state: 'RETURN_HANDOFF_READY', cycle: cycle({ drain: inspected, return_drain: offeredReturn, receiver: null }) }))).toEqual([
        acceptBack(),
      ]);
    });

    it('a cycle imported through the remote: the primary takes it back on its machine; the holder whose return went out may withdraw it', () => {
      const waitForPrimary = way(
        'wait',
        null,
        `wait: the primary takes the work back with \`handoff accept ${ID} --return\` in its checkout; this checkout follows the remote`,
      );
      const withdraw = way(
        'cancel',
        'handoff cancel',
        'or, if the primary will not come, `handoff cancel` withdraws the return (on the remote first, refused with lease_held when the primary took it back first); the holder may then close one-way',
      );
      expect(nextSteps(view({ state: 'RETURN_HANDOFF_READY', cycle: cycle({ ...travelled, return_drain: offeredReturn }) }))).toEqual([
        waitForPrimary,
        withdraw,
      ]);
      expect(nextSteps(view({ state: 'RETURN_HANDOFF_READY', cycle: cycle({ ...travelled, return_drain: drain('return') }) }))).toEqual([waitForPrimary]);
    });
  });

  it('CLOSED: review, and the next cycle starts by itself or by hand', () => {
    expect(nextSteps(view({ state: 'CLOSED', cycle: cycle() }))).toEqual([
      way('now', 'handoff now', 'review the returned work; the next reading or `handoff now` starts a new cycle'),
    ]);
  });
});
