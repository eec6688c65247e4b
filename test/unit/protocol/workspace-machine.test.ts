import { describe, expect, it } from 'vitest';
import { drainKey, isCycleId, STATES } from '../../../protocol/index.js';
import { Harness, T0 } from './machine-harness.js';

const verified = { mechanism: 'handoff_branch' as const, ref: 'refs/heads/handoff/x', commit: 'abc', verified: true };

describe('pressure transitions', () => {
  it('moves NORMAL → PREPARE at 80 and PREPARE → EVACUATE at 90, with a telemetry trigger', () => {
    const h = new Harness();
    expect(h.reading('five_hour', 79.9).code).toBe('reading_recorded');
    expect(h.state).toBe('NORMAL');
    h.reading('five_hour', 82);
    expect(h.state).toBe('PREPARE');
    h.reading('five_hour', 93);
    expect(h.state).toBe('EVACUATE');
    const cycle = h.context.cycle;
    expect(cycle?.trigger.kind).toBe('telemetry');
    expect(cycle?.trigger.readings.map((r) => r.used_percent)).toEqual([93]);
    expect(isCycleId(cycle?.id ?? '')).toBe(true);
    expect(cycle?.id).toBe('20260820T100000Z-k3f7qa');
  });

  it('jumps from NORMAL straight to EVACUATE on a reading at the evacuate line', () => {
    const h = new Harness();
    h.reading('seven_day', 90);
    expect(h.state).toBe('EVACUATE');
  });

  it('keeps values above 100 and uses the maximum over credible readings of all metrics', () => {
    const h = new Harness();
    h.reading('context', 40);
    h.reading('seven_day', 105);
    expect(h.state).toBe('EVACUATE');
    expect(h.context.readings['claude-statusline/seven_day/session-1']?.used_percent).toBe(105);
  });

  it.each([
    ['unknown percent', { used_percent: null }, 'unknown_percent'],
    ['a past resets_at', { resets_at: T0 / 1000 - 1 }, 'window_reset_passed'],
    ['a stale observation', { observed_at: new Date(T0 - 601_000).toISOString() }, 'stale_observation'],
    ['an observation from the future', { observed_at: new Date(T0 + 3_600_000).toISOString() }, 'observed_in_future'],
  ])('ignores a reading with %s and says why', (_name, extra, reason) => {
    const h = new Harness();
    const before = h.snapshot;
    const outcome = h.reading('five_hour', 95, extra);
    expect(outcome.code).toBe('reading_not_credible');
    expect(outcome.changed).toBe(false);
    expect(outcome.data).toEqual({ reason });
    expect(outcome.message).toMatch(/nothing changed/);
    expect(h.snapshot).toBe(before);
  });

  it('ignores an unknown source even if it bypassed the schema', () => {
    const h = new Harness();
    const outcome = h.reading('five_hour', 95, { source: 'guesswork' as never });
    expect(outcome.data).toEqual({ reason: 'unknown_source' });
    expect(h.state).toBe('NORMAL');
  });

  it('does not let an older reading replace a newer one', () => {
    const h = new Harness();
    h.reading('five_hour', 70);
    const outcome = h.reading('five_hour', 10, { observed_at: new Date(T0 - 60_000).toISOString() });
    expect(outcome.data).toEqual({ reason: 'superseded' });
    expect(h.context.readings['claude-statusline/five_hour/session-1']?.used_percent).toBe(70);
  });
});

describe('PREPARE → NORMAL hysteresis', () => {
  it('stays in PREPARE between 75 and 80 and falls back only below 75', () => {
    const h = new Harness();
    h.reading('five_hour', 85);
    expect(h.state).toBe('PREPARE');
    h.reading('five_hour', 76);
    expect(h.state).toBe('PREPARE');
    h.reading('five_hour', 75);
    expect(h.state).toBe('PREPARE');
    h.reading('five_hour', 74.9);
    expect(h.state).toBe('NORMAL');
  });

  it('needs every credible reading below the line', () => {
    const h = new Harness();
    h.reading('five_hour', 85);
    h.reading('context', 78);
    h.reading('five_hour', 10);
    expect(h.state).toBe('PREPARE');
    h.reading('context', 20);
    expect(h.state).toBe('NORMAL');
  });

  it('never falls back because telemetry went missing', () => {
    const h = new Harness();
    h.reading('five_hour', 85);
    h.advance(3600);
    // The 85 % reading is now stale; a fresh low reading from another metric is not enough.
    h.reading('context', 5);
    expect(h.state).toBe('PREPARE');
    // An unknown percent changes nothing either.
    h.reading('five_hour', null);
    expect(h.state).toBe('PREPARE');
    // A fresh low reading of the same metric is the evidence that pressure went away.
    h.reading('five_hour', 30);
    expect(h.state).toBe('NORMAL');
  });

  it('lets a window that really reset stop blocking the fall back', () => {
    const h = new Harness();
    h.reading('five_hour', 85, { resets_at: T0 / 1000 + 60 });
    h.advance(120);
    h.reading('context', 5);
    expect(h.state).toBe('NORMAL');
  });

  it('uses the configured thresholds', () => {
    const h = new Harness({ prepare_percent: 50, evacuate_percent: 60, hysteresis_percent: 10, freshness_seconds: 60 });
    h.reading('context', 55);
    expect(h.state).toBe('PREPARE');
    h.reading('context', 41);
    expect(h.state).toBe('PREPARE');
    h.reading('context', 39);
    expect(h.state).toBe('NORMAL');
    h.reading('context', 61);
    expect(h.state).toBe('EVACUATE');
  });
});

describe('manual and provider triggers', () => {
  it('a manual PREPARE holds over a low reading that was already there, and relaxes on relief observed after it', () => {
    const h = new Harness();
    h.reading('five_hour', 10);
    expect(h.send({ type: 'PREPARE', reason: 'long task ahead' }).code).toBe('prepare_entered');
    // The command answered prepare_entered: the daemon does what it answered.
    expect(h.state).toBe('PREPARE');
    h.advance(5);
    h.reading('five_hour', 12);
    expect(h.state).toBe('NORMAL');
    expect(h.context.prepare_requested_at).toBeNull();
  });

  it('handoff prepare and handoff now', () => {
    const h = new Harness();
    expect(h.send({ type: 'PREPARE', reason: 'long task ahead' }).code).toBe('prepare_entered');
    expect(h.state).toBe('PREPARE');
    expect(h.send({ type: 'PREPARE', reason: null }).changed).toBe(false);
    expect(h.send({ type: 'NOW', reason: 'leaving', wait: true }).code).toBe('evacuation_started');
    expect(h.state).toBe('EVACUATE');
    expect(h.context.cycle?.trigger).toEqual({ kind: 'manual', reason: 'leaving', readings: [] });
    expect(h.send({ type: 'NOW', reason: null, wait: true }).changed).toBe(false);
    expect(h.send({ type: 'PREPARE', reason: null }).code).toBe('wrong_state');
  });

  it('a provider warning goes straight to EVACUATE from NORMAL', () => {
    const h = new Harness();
    h.send({
      type: 'WARNING',
      warning: {
        source: 'claude-hook',
        kind: 'rate_limit',
        text: 'rate_limit',
        recovers: true,
        retry_after_seconds: null,
        observed_at: new Date(T0).toISOString(),
        raw_sha256: null,
        executor: null,
      },
    });
    expect(h.state).toBe('EVACUATE');
    expect(h.context.cycle?.trigger.kind).toBe('provider_warning');
    expect(h.context.warnings).toHaveLength(1);
  });
});

describe('pause', () => {
  const pause = { reason: 'lunch', since: new Date(T0).toISOString(), path: '/repo/.session-handoff/PAUSE' };

  it('records readings but moves nothing while paused, and moves on unpause', () => {
    const h = new Harness();
    h.send({ type: 'PAUSE_SET', scope: 'workspace', pause });
    expect(h.reading('five_hour', 95).code).toBe('reading_recorded');
    expect(h.state).toBe('NORMAL');
    expect(h.send({ type: 'NOW', reason: null, wait: true }).code).toBe('paused_denied');
    expect(h.send({ type: 'PREPARE', reason: null }).code).toBe('paused_denied');
    h.send({ type: 'PAUSE_SET', scope: 'workspace', pause: null });
    expect(h.state).toBe('EVACUATE');
  });

  it('a global pause holds until it is lifted, independently of the workspace one', () => {
    const h = new Harness();
    h.send({ type: 'PAUSE_SET', scope: 'global', pause });
    h.send({ type: 'PAUSE_SET', scope: 'workspace', pause });
    h.reading('five_hour', 85);
    h.send({ type: 'PAUSE_SET', scope: 'workspace', pause: null });
    expect(h.state).toBe('NORMAL');
    h.send({ type: 'PAUSE_SET', scope: 'global', pause: null });
    expect(h.state).toBe('PREPARE');
  });
});

describe('the handoff path', () => {
  function ready(profile: 'emergency-return' | 'one-way' = 'emergency-return') {
    const h = new Harness(undefined, profile);
    h.send({ type: 'LEASE_ACQUIRE', executor: 'primary' });
    h.send({ type: 'NOW', reason: null, wait: true });
    return h;
  }

  it('never reaches HANDOFF_READY without a verified checkpoint', () => {
    const h = ready();
    const outcome = h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: { ...verified, verified: false }, remote: null });
    // The drain stops there and says why (status would otherwise go on saying "checkpointing").
    expect([outcome.code, outcome.changed]).toEqual(['drain_blocked', true]);
    expect(h.state).toBe('EVACUATE');
    expect(h.context.blocked).toMatch(/not verified recoverable/);
    expect(h.context.lease.offered).toBe(false);
    h.send({ type: 'DRAIN_BLOCKED', reason: 'push rejected', step: 'publish' });
    expect(h.context.blocked).toBe('push rejected');
  });

  it('walks NORMAL → … → CLOSED → NORMAL with the lease moving by accept and return only', () => {
    const h = ready();
    h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: null });
    expect(h.state).toBe('HANDOFF_READY');
    expect(h.context.lease.offered).toBe(true);
    expect(h.send({ type: 'LEASE_ACQUIRE', executor: 'sneaky' }).code).toBe('lease_held');
    expect(h.send({ type: 'HANDOFF_ACCEPTED', executor: 'emergency', receiver_root: '/clone', token: null }).code).toBe('accepted');
    expect(h.state).toBe('TAKEOVER');
    expect(h.context.lease.holder).toMatchObject({ executor: 'emergency', token: 2 });
    expect(h.send({ type: 'LEASE_RENEW', token: 1 }).code).toBe('stale_token');
    // No return leg runs yet: a drain's report of one is not possible here.
    expect(h.send({ type: 'RETURN_READY', token: 2, checkpoint: verified }).code).toBe('wrong_state');
    expect(h.send({ type: 'CLOSE_ONE_WAY', token: 2 }).code).toBe('wrong_state');
    expect(h.send({ type: 'RETURN_START', token: 2, wait: false }).code).toBe('return_started');
    expect(h.send({ type: 'RETURN_READY', token: 1, checkpoint: verified }).code).toBe('stale_token');
    h.send({ type: 'RETURN_READY', token: 2, checkpoint: verified });
    expect(h.state).toBe('RETURN_HANDOFF_READY');
    h.send({ type: 'RETURN_ACCEPTED', executor: 'primary', token: null });
    expect(h.state).toBe('CLOSED');
    expect(h.context.lease.holder).toMatchObject({ executor: 'primary', token: 3 });
    h.reading('context', 10);
    expect(h.state).toBe('NORMAL');
    expect(h.context.cycle).toBeNull();
  });

  it('closes a one-way cycle from TAKEOVER with the holder token', () => {
    const h = ready('one-way');
    h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: null });
    h.send({ type: 'HANDOFF_ACCEPTED', executor: 'emergency', receiver_root: '/clone', token: null });
    expect(h.send({ type: 'CLOSE_ONE_WAY', token: 1 }).code).toBe('stale_token');
    h.send({ type: 'CLOSE_ONE_WAY', token: 2 });
    expect(h.state).toBe('CLOSED');
  });

  const pause = { reason: 'stop', since: new Date(T0).toISOString(), path: '/repo/.session-handoff/PAUSE' };

  it('a one-way close honours the kill switch like every other transition (finding 3)', () => {
    const h = ready('one-way');
    h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: null });
    h.send({ type: 'HANDOFF_ACCEPTED', executor: 'emergency', receiver_root: '/clone', token: null });
    h.send({ type: 'PAUSE_SET', scope: 'workspace', pause });
    expect(h.send({ type: 'CLOSE_ONE_WAY', token: 2 }).code).toBe('paused_denied');
    expect(h.state).toBe('TAKEOVER');
    h.send({ type: 'PAUSE_SET', scope: 'workspace', pause: null });
    expect(h.send({ type: 'CLOSE_ONE_WAY', token: 2 }).code).toBe('ok');
    expect(h.state).toBe('CLOSED');
  });

  it('a return leg whose lease changed hands is started and completed by the current holder; old tokens stay stale (finding 1)', () => {
    const h = ready();
    h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: null });
    h.send({ type: 'HANDOFF_ACCEPTED', executor: 'emergency', receiver_root: '/clone', token: null });
    expect(h.send({ type: 'LEASE_RELEASE', token: 2 }).code).toBe('lease_released');
    expect(h.send({ type: 'LEASE_ACQUIRE', executor: 'rescuer' }).data).toEqual({ token: 3 });
    expect(h.send({ type: 'RETURN_START', token: 2, wait: false }).code).toBe('stale_token');
    expect(h.send({ type: 'RETURN_START', token: 3, wait: false }).code).toBe('return_started');
    expect(h.context.cycle?.receiver).toEqual({ executor: 'rescuer', root: '/clone', token: 3 });
    // The drain runner fences RETURN_READY with the cycle's receiver token: the current holder's now.
    expect(h.send({ type: 'RETURN_READY', token: 2, checkpoint: verified }).code).toBe('stale_token');
    expect(h.send({ type: 'RETURN_READY', token: h.context.cycle?.receiver?.token ?? 0, checkpoint: verified }).code).toBe('ok');
    expect(h.state).toBe('RETURN_HANDOFF_READY');
  });

  it('a lease that changes hands during the return drain: the new holder re-fences it with `handoff return`', () => {
    const h = ready();
    h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: null });
    h.send({ type: 'HANDOFF_ACCEPTED', executor: 'emergency', receiver_root: '/clone', token: null });
    h.send({ type: 'RETURN_START', token: 2, wait: false });
    h.send({ type: 'LEASE_BREAK', reason: 'the receiver is gone' });
    h.send({ type: 'LEASE_ACQUIRE', executor: 'rescuer' });
    expect(h.send({ type: 'RETURN_READY', token: 2, checkpoint: verified }).code).toBe('stale_token');
    const refence = h.send({ type: 'RETURN_START', token: 3, wait: false });
    expect([refence.code, refence.changed]).toEqual(['return_started', true]);
    expect(h.send({ type: 'RETURN_START', token: 3, wait: false }).changed).toBe(false);
    expect(h.send({ type: 'RETURN_READY', token: 3, checkpoint: verified }).code).toBe('ok');
  });

  describe('handoff cancel', () => {
    it('ends a blocked evacuation: NORMAL, the cycle recorded as abandoned, the holder keeps the lease (finding 8)', () => {
      const h = ready();
      h.send({ type: 'DRAIN_WAITED', why: 'no_wait' });
      h.send({ type: 'DRAIN_STEP_DONE', step: 'inspect', record: { at: new Date(T0).toISOString(), sha256: null, summary: {} } });
      h.send({ type: 'DRAIN_BLOCKED', reason: 'push rejected', step: 'publish' });
      const id = h.context.cycle?.id;
      h.send({ type: 'PAUSE_SET', scope: 'workspace', pause });
      const outcome = h.send({ type: 'CANCEL', reason: 'the remote is gone for good' });
      expect(outcome.code).toBe('cancelled');
      expect(outcome.data).toMatchObject({
        cycle: id,
        leg: 'out',
        step: 'validate',
        blocked: 'push rejected',
        reason: 'the remote is gone for good',
        state: 'NORMAL',
      });
      expect(h.state).toBe('NORMAL');
      expect(h.context.cycle).toBeNull();
      expect(h.context.blocked).toBeNull();
      expect(h.context.lease.holder).toMatchObject({ executor: 'primary', token: 1 });
      expect(h.send({ type: 'CANCEL', reason: null }).code).toBe('wrong_state');
    });

    it('withdraws an offered lease: a later accept is refused', () => {
      const h = ready();
      h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: null });
      expect(h.send({ type: 'CANCEL', reason: null }).code).toBe('cancelled');
      expect(h.context.lease.offered).toBe(false);
      expect(h.send({ type: 'HANDOFF_ACCEPTED', executor: 'late', receiver_root: '/clone', token: null }).code).toBe('wrong_state');
    });

    it('refuses to withdraw an offer that travels through the remote', () => {
      const h = ready();
      h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: { name: 'origin', lease_head: 'abc' } });
      const outcome = h.send({ type: 'CANCEL', reason: null });
      expect([outcome.code, outcome.changed]).toEqual(['wrong_state', false]);
      // The out leg's words: a receiver may be taking it (not the return leg's primary).
      const id = h.context.cycle?.id ?? 'no cycle';
      expect([outcome.message, outcome.hint]).toEqual([
        `the offer of cycle ${id} went out through the git remote and is not withdrawn there: a receiver may be taking it`,
        'run `handoff cancel` again: it withdraws the offer on the remote first, unless a receiver took it already; `handoff status` follows the remote',
      ]);
      expect(h.state).toBe('HANDOFF_READY');
    });

    it('ends a return leg of a cycle whose out leg travelled through the remote, until its own offer went out', () => {
      const h = ready();
      h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: { name: 'origin', lease_head: 'abc' } });
      h.send({ type: 'HANDOFF_ACCEPTED', executor: 'emergency', receiver_root: '/clone', token: null });
      h.send({ type: 'RETURN_START', token: 2, wait: false });
      h.send({ type: 'DRAIN_WAITED', why: 'no_wait' });
      h.send({ type: 'DRAIN_STEP_DONE', step: 'offer', record: { at: new Date(T0).toISOString(), sha256: null, summary: { lease_head: 'def' } } });
      expect(h.send({ type: 'CANCEL', reason: null }).code).toBe('wrong_state');
      const h2 = ready();
      h2.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: { name: 'origin', lease_head: 'abc' } });
      h2.send({ type: 'HANDOFF_ACCEPTED', executor: 'emergency', receiver_root: '/clone', token: null });
      h2.send({ type: 'RETURN_START', token: 2, wait: false });
      expect(h2.send({ type: 'CANCEL', reason: null }).code).toBe('cancelled');
    });

    it('a step still in flight when the drain was cancelled reports into nothing, not into the next drain', () => {
      const h = ready();
      const old = h.context.cycle;
      if (old === null) throw new Error('no cycle');
      const fence = drainKey(old, old.drain);
      h.send({ type: 'DRAIN_WAITED', why: 'no_wait', drain: fence });
      h.send({ type: 'CANCEL', reason: null });
      h.advance(1);
      h.send({ type: 'NOW', reason: null, wait: false });
      const late = h.send({ type: 'DRAIN_STEP_DONE', step: 'inspect', record: { at: new Date(T0).toISOString(), sha256: null, summary: {} }, drain: fence });
      expect([late.code, late.changed]).toEqual(['wrong_state', false]);
      expect(h.context.cycle?.drain.steps).toEqual({});
      const cycle = h.context.cycle;
      if (cycle === null) throw new Error('no cycle');
      expect(h.send({ type: 'DRAIN_WAITED', why: 'no_wait', drain: drainKey(cycle, cycle.drain) }).changed).toBe(true);
    });

    it('pressure already there does not start the cancelled evacuation again; a newer reading does', () => {
      const h = new Harness();
      h.reading('five_hour', 95);
      expect(h.state).toBe('EVACUATE');
      h.advance(1);
      h.send({ type: 'CANCEL', reason: null });
      expect(h.state).toBe('NORMAL');
      h.advance(1);
      h.reading('context', 50);
      expect(h.state).toBe('NORMAL');
      h.reading('five_hour', 96);
      expect(h.state).toBe('EVACUATE');
    });

    it('ends a manual PREPARE', () => {
      const h = new Harness();
      h.send({ type: 'PREPARE', reason: null });
      expect(h.send({ type: 'CANCEL', reason: null }).code).toBe('cancelled');
      expect(h.state).toBe('NORMAL');
    });

    it('ends a return leg: back to TAKEOVER, the holder keeps the lease, the next return continues the revisions', () => {
      const h = ready();
      h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: null });
      h.send({ type: 'HANDOFF_ACCEPTED', executor: 'emergency', receiver_root: '/clone', token: null });
      expect(h.send({ type: 'CANCEL', reason: null }).code).toBe('wrong_state');
      h.send({ type: 'RETURN_START', token: 2, wait: false });
      h.send({ type: 'DRAIN_WAITED', why: 'no_wait' });
      h.send({
        type: 'DRAIN_STEP_DONE',
        step: 'snapshot',
        record: { at: new Date(T0).toISOString(), sha256: null, summary: { ref: 'refs/heads/handoff/x-return', commit: 'c1' } },
      });
      const outcome = h.send({ type: 'CANCEL', reason: null });
      expect(outcome.data).toMatchObject({ leg: 'return', kept_ref: 'refs/heads/handoff/x-return', state: 'TAKEOVER' });
      expect(h.state).toBe('TAKEOVER');
      expect(h.context.cycle?.return_drain).toBeNull();
      expect(h.context.lease.holder).toMatchObject({ executor: 'emergency', token: 2 });
      h.send({ type: 'RETURN_START', token: 2, wait: false });
      expect(h.context.cycle?.return_drain).toMatchObject({ revision: 2, previous_commit: 'c1' });
    });

    it('after a cancelled return the holder may close an emergency-return cycle one-way; not before, not while a return runs', () => {
      const h = ready();
      h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: null });
      h.send({ type: 'HANDOFF_ACCEPTED', executor: 'emergency', receiver_root: '/clone', token: null });
      expect(h.send({ type: 'CLOSE_ONE_WAY', token: 2 }).code).toBe('wrong_state');
      h.send({ type: 'RETURN_START', token: 2, wait: false });
      h.send({ type: 'CANCEL', reason: 'the primary remote refuses the return branch' });
      h.send({ type: 'RETURN_START', token: 2, wait: false });
      expect(h.send({ type: 'CLOSE_ONE_WAY', token: 2 }).code).toBe('wrong_state');
      h.send({ type: 'CANCEL', reason: null });
      expect(h.send({ type: 'CLOSE_ONE_WAY', token: 1 }).code).toBe('stale_token');
      expect(h.send({ type: 'CLOSE_ONE_WAY', token: 2 }).code).toBe('ok');
      expect(h.state).toBe('CLOSED');
    });

    it('is refused where there is nothing to cancel', () => {
      const h = ready();
      h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: null });
      h.send({ type: 'HANDOFF_ACCEPTED', executor: 'emergency', receiver_root: '/clone', token: null });
      const held = h.send({ type: 'CANCEL', reason: null });
      expect([held.code, held.message]).toEqual(['wrong_state', expect.stringMatching(/^nothing to cancel: no return leg/)]);
      h.send({ type: 'RETURN_START', token: 2, wait: false });
      h.send({ type: 'RETURN_READY', token: 2, checkpoint: verified });
      expect(h.state).toBe('RETURN_HANDOFF_READY');
      expect(h.send({ type: 'CANCEL', reason: null }).code).toBe('wrong_state');
      expect(new Harness().send({ type: 'CANCEL', reason: null }).code).toBe('wrong_state');
    });
  });

  it('refuses events that make no sense in a state, changing nothing', () => {
    const h = new Harness();
    for (const type of ['CHECKPOINT_VERIFIED', 'HANDOFF_ACCEPTED', 'RETURN_ACCEPTED'] as const) {
      const outcome =
        type === 'CHECKPOINT_VERIFIED'
          ? h.send({ type, checkpoint: verified, remote: null })
          : type === 'HANDOFF_ACCEPTED'
            ? h.send({ type, executor: 'x', receiver_root: '/x', token: null })
            : h.send({ type, executor: 'x', token: null });
      expect(outcome.code).toBe('wrong_state');
      expect(outcome.hint).toMatch(/handoff now/);
    }
    expect(h.state).toBe('NORMAL');
  });

  it('declares all seven states', () => {
    expect(STATES).toEqual(['NORMAL', 'PREPARE', 'EVACUATE', 'HANDOFF_READY', 'TAKEOVER', 'RETURN_HANDOFF_READY', 'CLOSED']);
  });
});

describe('pause reports', () => {
  it('a reason written after the PAUSE file appeared replaces the empty one and keeps the first time', () => {
    const h = new Harness();
    const path = '/repo/.session-handoff/PAUSE';
    h.send({ type: 'PAUSE_SET', scope: 'workspace', pause: { reason: null, since: '2026-08-20T10:00:00.000Z', path } });
    expect(h.send({ type: 'PAUSE_SET', scope: 'workspace', pause: { reason: null, since: '2026-08-20T10:00:01.000Z', path } }).changed).toBe(false);
    expect(h.send({ type: 'PAUSE_SET', scope: 'workspace', pause: { reason: 'flaky test', since: '2026-08-20T10:00:02.000Z', path } }).changed).toBe(true);
    expect(h.context.paused.workspace).toEqual({ reason: 'flaky test', since: '2026-08-20T10:00:00.000Z', path });
  });
});
