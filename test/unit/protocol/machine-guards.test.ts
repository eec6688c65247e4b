import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { drainKey, newDrain, type Cycle, type RemoteLeaseRecord, type WorkspaceContext, type WorkspaceEvent } from '../../../protocol/index.js';
import { guards } from '../../../protocol/machine/index.js';
import { contextAt, cycleAt, leaseHeldBy, PAUSE, readingOf, T0, VERIFIED } from './machine-harness.js';

/**
 * The machine's named guards, each asked directly: the state nodes say where a guard decides, these
 * tests say what it decides on (the model test walks the states; a guard's edges are pinned here).
 */
const meta = { at: T0, entropy: 'k3f7qa' };
const ask = (name: keyof typeof guards, context: WorkspaceContext, event: WorkspaceEvent) => guards[name]({ context, event });
const NOW: WorkspaceEvent = { type: 'NOW', reason: null, wait: false, ...meta };

function remote(state: RemoteLeaseRecord['state'], holderToken: number | null, last_token: number, returning = false): WorkspaceEvent {
  return {
    type: 'REMOTE_LEASE',
    ...meta,
    lease: {
      schema_version: 1,
      cycle: 'c',
      state,
      holder: holderToken === null ? null : { executor: 'far', token: holderToken },
      last_token,
      manifest: { path: 'manifest.json', sha256: 'a'.repeat(64) },
      at: new Date(T0).toISOString(),
    },
    lease_head: 'h',
    return_drain: returning ? newDrain('return', true, new Date(T0).toISOString()) : null,
  };
}

describe('the pause guard', () => {
  it('holds while either switch is set, the workspace one or the global one', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.boolean(), (global, workspace) => {
        const context = { ...contextAt('NORMAL'), paused: { global: global ? PAUSE : null, workspace: workspace ? PAUSE : null } };
        expect(ask('paused', context, NOW)).toBe(global || workspace);
      }),
    );
  });
});

describe('the pressure guards', () => {
  it('put a fresh reading at the line it reached: evacuate from 90 %, prepare from 80 %', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100 }), (p) => {
        const context = { ...contextAt('NORMAL'), readings: { r: readingOf(p) } };
        expect([ask('atEvacuateLine', context, NOW), ask('atPrepareLine', context, NOW)]).toEqual([p >= 90, p >= 80 && p < 90]);
      }),
    );
  });

  it('relax a PREPARE only below the hysteresis band, and a manual one only on relief observed after the request', () => {
    const low = { r: readingOf(60) };
    const prepare = contextAt('PREPARE');
    expect(ask('canRelax', { ...prepare, readings: low }, NOW)).toBe(true);
    expect(ask('canRelax', { ...prepare, readings: { r: readingOf(78) } }, NOW)).toBe(false);
    const requested = (at: number) => ({ ...prepare, prepare_requested_at: new Date(at).toISOString() });
    // Relief observed before or exactly when the operator asked is not news.
    expect(ask('canRelax', { ...requested(T0), readings: low }, NOW)).toBe(false);
    expect(ask('canRelax', { ...requested(T0 - 1000), readings: low }, NOW)).toBe(true);
    // A reading after the request that still presses relieves nothing.
    expect(ask('canRelax', { ...requested(T0 - 1000), readings: { r: readingOf(85) } }, NOW)).toBe(false);
  });
});

describe('the checkpoint guard', () => {
  it("is the checkpoint's own verdict, for the out leg and the return leg alike", () => {
    for (const verified of [true, false]) {
      const checkpoint = { ...VERIFIED, verified };
      expect(ask('checkpointVerified', contextAt('EVACUATE'), { type: 'CHECKPOINT_VERIFIED', checkpoint, remote: null, ...meta })).toBe(verified);
      expect(ask('checkpointVerified', contextAt('TAKEOVER'), { type: 'RETURN_READY', token: 1, checkpoint, ...meta })).toBe(verified);
    }
  });

  it('refuses to judge an event that carries no checkpoint', () => {
    expect(() => ask('checkpointVerified', contextAt('EVACUATE'), NOW)).toThrow();
  });
});

describe('the lease guards', () => {
  const fenced = (type: 'RETURN_READY' | 'CLOSE_ONE_WAY' | 'RETURN_START' | 'ACCEPT_UNDONE', token: number): WorkspaceEvent => {
    switch (type) {
      case 'RETURN_READY':
        return { type, token, checkpoint: VERIFIED, ...meta };
      case 'CLOSE_ONE_WAY':
        return { type, token, ...meta };
      case 'RETURN_START':
        return { type, token, wait: false, ...meta };
      case 'ACCEPT_UNDONE':
        return { type, token, imported: false, reason: 'checkout failed', lease_head: null, ...meta };
    }
  };

  it("grant a fenced verb only to the holder's token, and to nobody when the lease is free", () => {
    fc.assert(
      fc.property(
        fc.constantFrom('RETURN_READY' as const, 'CLOSE_ONE_WAY' as const, 'RETURN_START' as const, 'ACCEPT_UNDONE' as const),
        fc.option(fc.integer({ min: 1, max: 5 })),
        fc.integer({ min: 1, max: 5 }),
        (type, holder, token) => {
          const context = holder === null ? contextAt('TAKEOVER') : leaseHeldBy(contextAt('TAKEOVER'), holder);
          expect(ask('holdsLease', context, fenced(type, token))).toBe(holder === token);
        },
      ),
    );
  });

  it('refuses to judge an event that carries no token', () => {
    expect(() => ask('holdsLease', contextAt('TAKEOVER'), NOW)).toThrow();
  });

  it('undo an imported accept only when the accept imported the cycle', () => {
    const undone = (imported: boolean): WorkspaceEvent => ({ type: 'ACCEPT_UNDONE', token: 1, imported, reason: 'checkout failed', lease_head: null, ...meta });
    expect([ask('undoesImport', contextAt('TAKEOVER'), undone(true)), ask('undoesImport', contextAt('TAKEOVER'), undone(false))]).toEqual([true, false]);
    expect(ask('undoesImport', contextAt('TAKEOVER'), NOW)).toBe(false);
  });
});

describe('the remote chain guards', () => {
  const takeover = leaseHeldBy({ ...contextAt('TAKEOVER'), lease: { ...contextAt('TAKEOVER').lease, last_token: 4 } }, 4);

  it('see a re-offer only in an offered record at least as new as the last token this workspace knows', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<RemoteLeaseRecord['state']>('offered', 'taken', 'return_offered', 'closed', 'withdrawn'),
        fc.integer({ min: 2, max: 6 }),
        (state, last) => {
          expect(ask('remoteReoffered', takeover, remote(state, null, last))).toBe(state === 'offered' && last >= 4);
        },
      ),
    );
    expect(ask('remoteReoffered', takeover, NOW)).toBe(false);
  });

  it('read taken, returned and closed records only with what makes them real: a holder, a return drain', () => {
    const cases: readonly [RemoteLeaseRecord['state'], number | null, boolean][] = [
      ['taken', 5, false],
      ['taken', null, false],
      ['return_offered', 5, true],
      ['return_offered', 5, false],
      ['closed', 5, false],
      ['closed', null, false],
      ['offered', 5, true],
    ];
    const seen = cases.map(([state, holder, returning]) => {
      const event = remote(state, holder, 6, returning);
      return [ask('remoteTaken', takeover, event), ask('remoteReturned', takeover, event), ask('remoteClosed', takeover, event)];
    });
    expect(seen).toEqual([
      [true, false, false],
      [false, false, false],
      [false, true, false],
      [false, false, false],
      [false, false, true],
      [false, false, false],
      [false, false, false],
    ]);
    for (const name of ['remoteTaken', 'remoteReturned', 'remoteClosed', 'remoteMoved'] as const) expect(ask(name, takeover, NOW)).toBe(false);
  });

  it('see the lease move when the chain names a holder other than the one this workspace knows', () => {
    expect(ask('remoteMoved', takeover, remote('taken', 5, 6))).toBe(true);
    expect(ask('remoteMoved', takeover, remote('taken', 4, 6))).toBe(false);
    expect(ask('remoteMoved', takeover, remote('taken', null, 6))).toBe(false);
    expect(ask('remoteMoved', contextAt('TAKEOVER'), remote('taken', 4, 6))).toBe(true);
  });
});

describe('the cycle guards', () => {
  it('tell an imported cycle (no inspect step ran here) from one this workspace drained', () => {
    const drained = cycleAt({ inspect: true });
    expect(ask('importedCycle', { ...contextAt('TAKEOVER'), cycle: cycleAt({ inspect: false }) }, NOW)).toBe(true);
    expect(ask('importedCycle', { ...contextAt('TAKEOVER'), cycle: drained }, NOW)).toBe(false);
    expect(ask('importedCycle', { ...contextAt('TAKEOVER'), cycle: null }, NOW)).toBe(false);
  });

  it('let a one-way cycle, or one whose return was cancelled, be closed by hand; nothing without a cycle', () => {
    const ret = newDrain('return', false, new Date(T0).toISOString());
    const withCycle = (cycle: Cycle | null) => ask('closable', { ...contextAt('TAKEOVER'), cycle }, NOW);
    expect(withCycle(null)).toBe(false);
    expect(withCycle({ ...cycleAt({ inspect: true }), profile: 'one-way' })).toBe(true);
    expect(withCycle(cycleAt({ inspect: true }))).toBe(false);
    expect(withCycle({ ...cycleAt({ inspect: true }), abandoned_return: ret })).toBe(true);
    expect(withCycle({ ...cycleAt({ inspect: true }), abandoned_return: ret, return_drain: ret })).toBe(false);
  });
});

describe('the stale drain guard', () => {
  const cycle = { ...cycleAt({ inspect: true }), return_drain: newDrain('return', false, new Date(T0 + 5000).toISOString()) };
  const blocked = (drain?: string): WorkspaceEvent => ({
    type: 'DRAIN_BLOCKED',
    reason: 'push rejected',
    step: 'publish',
    ...meta,
    ...(drain === undefined ? {} : { drain }),
  });

  it('refuses a report fenced to another drain than the running one, in either leg; an unfenced one passes', () => {
    const out = drainKey(cycle, cycle.drain);
    const back = drainKey(cycle, cycle.return_drain);
    const evacuate = { ...contextAt('EVACUATE'), cycle };
    const returning = { ...contextAt('TAKEOVER'), cycle };
    expect([ask('staleDrain', evacuate, blocked(out)), ask('staleDrain', evacuate, blocked(back)), ask('staleDrain', evacuate, blocked())]).toEqual([
      false,
      true,
      false,
    ]);
    expect([ask('staleDrain', returning, blocked(back)), ask('staleDrain', returning, blocked(out))]).toEqual([false, true]);
  });

  it('refuses every fenced report where no drain runs', () => {
    const out = drainKey(cycle, cycle.drain);
    expect(ask('staleDrain', { ...contextAt('HANDOFF_READY'), cycle }, blocked(out))).toBe(true);
    expect(ask('staleDrain', { ...contextAt('EVACUATE'), cycle: null }, blocked(out))).toBe(true);
  });
});

describe('the cancel guards', () => {
  const cancel = (withdrawn?: string | null): WorkspaceEvent => ({ type: 'CANCEL', reason: null, ...meta, ...(withdrawn === undefined ? {} : { withdrawn }) });
  const ret = newDrain('return', false, new Date(T0).toISOString());

  it('let the holder withdraw a return only once the chain recorded the withdrawal, and only while a return leg is on offer', () => {
    const offered = { ...contextAt('RETURN_HANDOFF_READY'), cycle: { ...cycleAt({ inspect: true }), return_drain: ret } };
    expect([ask('returnWithdrawn', offered, cancel('w1')), ask('returnWithdrawn', offered, cancel(null)), ask('returnWithdrawn', offered, cancel())]).toEqual([
      true,
      false,
      false,
    ]);
    expect(ask('returnWithdrawn', { ...offered, cycle: cycleAt({ inspect: true }) }, cancel('w1'))).toBe(false);
    expect(ask('returnWithdrawn', { ...offered, cycle: null }, cancel('w1'))).toBe(false);
    expect(ask('returnWithdrawn', offered, NOW)).toBe(false);
  });

  it('keep a cancel from withdrawing an offer that went out through a remote, unless the chain already withdrew it', () => {
    const travelling = { ...contextAt('HANDOFF_READY'), cycle: { ...cycleAt({ inspect: true }), remote: { name: 'origin', lease_head: 'h1' } } };
    expect([ask('offerTravels', travelling, cancel()), ask('offerTravels', travelling, cancel(null)), ask('offerTravels', travelling, cancel('w1'))]).toEqual([
      true,
      true,
      false,
    ]);
    expect(ask('offerTravels', travelling, NOW)).toBe(true);
    expect(ask('offerTravels', { ...travelling, cycle: cycleAt({ inspect: true }) }, cancel())).toBe(false);
    expect(ask('offerTravels', { ...travelling, cycle: null }, cancel())).toBe(false);
  });
});
