import { describe, expect, it } from 'vitest';
import type { PressurePolicy, WorkspaceState } from '../../../protocol/index.js';
import { Harness, POLICY } from './machine-harness.js';

/** `handoff config set` on a running daemon: the new policy goes through the machine as CONFIG_SET. */
const setPolicy = (h: Harness, change: Partial<PressurePolicy>) =>
  h.send({ type: 'CONFIG_SET', policy: { ...h.context.policy, ...change }, profile: h.context.profile });

const verified = { mechanism: 'handoff_branch' as const, ref: 'refs/heads/handoff/x', commit: 'abc', verified: true };

describe('a policy changed while the daemon runs', () => {
  it('a lowered PREPARE line moves a workspace already above it from NORMAL to PREPARE', () => {
    const h = new Harness({ ...POLICY, prepare_percent: 88, evacuate_percent: 95 });
    h.reading('context', 85);
    expect(h.state).toBe('NORMAL');
    expect(setPolicy(h, { prepare_percent: 80 }).changed).toBe(true);
    expect([h.state, h.context.policy.prepare_percent]).toEqual(['PREPARE', 80]);
    expect(h.context.cycle).toBeNull();
  });

  it('a lowered EVACUATE line starts a telemetry evacuation that names the new line', () => {
    const h = new Harness();
    h.reading('five_hour', 86);
    expect(h.state).toBe('PREPARE');
    setPolicy(h, { evacuate_percent: 85 });
    expect(h.state).toBe('EVACUATE');
    expect(h.context.cycle?.trigger.kind).toBe('telemetry');
    expect(h.context.cycle?.trigger.reason).toMatch(/85 % line/);
  });

  it('a raised line never moves a workspace out of EVACUATE or any later stage', () => {
    const h = new Harness();
    h.reading('five_hour', 92);
    const seen: WorkspaceState[] = [];
    const raise = () => {
      setPolicy(h, { prepare_percent: 98, evacuate_percent: 99 });
      seen.push(h.state);
      setPolicy(h, { prepare_percent: 80, evacuate_percent: 90 });
    };
    raise();
    h.send({ type: 'LEASE_ACQUIRE', executor: 'primary' });
    h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: null });
    raise();
    h.send({ type: 'HANDOFF_ACCEPTED', executor: 'laptop', receiver_root: '/clone', token: null });
    raise();
    expect(seen).toEqual(['EVACUATE', 'HANDOFF_READY', 'TAKEOVER']);
  });

  it('a raised PREPARE line lets PREPARE fall back only as a reading would: below the new line − hysteresis', () => {
    const h = new Harness();
    h.reading('context', 85);
    setPolicy(h, { prepare_percent: 88 });
    // 85 is above 88 − 5: the hysteresis holds PREPARE.
    expect(h.state).toBe('PREPARE');
    setPolicy(h, { prepare_percent: 91, evacuate_percent: 95 });
    expect(h.state).toBe('NORMAL');
  });

  it('a manual PREPARE holds when its line is raised: only a reading after the request is relief', () => {
    const h = new Harness();
    h.reading('context', 50);
    h.send({ type: 'PREPARE', reason: 'by hand' });
    setPolicy(h, { prepare_percent: 85 });
    expect(h.state).toBe('PREPARE');
  });

  it('a lowered line does not bring back a stage `handoff cancel` ended: the readings before the cancel are not news', () => {
    const h = new Harness();
    h.reading('context', 85);
    h.advance(1);
    expect(h.send({ type: 'CANCEL', reason: 'not now' }).code).toBe('cancelled');
    setPolicy(h, { prepare_percent: 70 });
    expect(h.state).toBe('NORMAL');
    h.advance(1);
    h.reading('context', 85);
    expect(h.state).toBe('PREPARE');
  });

  it('moves nothing while paused; the new line applies once the pause is lifted', () => {
    const h = new Harness({ ...POLICY, prepare_percent: 88, evacuate_percent: 95 });
    h.reading('context', 85);
    const pause = { path: '/repo/.session-handoff/PAUSE', reason: null, since: '2026-08-20T10:00:00.000Z' };
    h.send({ type: 'PAUSE_SET', scope: 'workspace', pause });
    setPolicy(h, { prepare_percent: 80 });
    expect([h.state, h.context.policy.prepare_percent]).toEqual(['NORMAL', 80]);
    h.send({ type: 'PAUSE_SET', scope: 'workspace', pause: null });
    expect(h.state).toBe('PREPARE');
  });
});
