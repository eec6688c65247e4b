import { describe, expect, it } from 'vitest';
import { statusView } from '../../../protocol/index.js';
import { Harness, T0 } from './machine-harness.js';

const verified = { mechanism: 'handoff_branch' as const, ref: 'refs/heads/handoff/x', commit: 'abc', verified: true };
const pause = { reason: null, since: new Date(T0).toISOString(), path: '/repo/.session-handoff/PAUSE' };

function ways(h: Harness) {
  const view = statusView(h.snapshot, h.at);
  return { situation: view.situation, verbs: view.next.map((n) => n.verb), next: view.next };
}

function taken() {
  const h = new Harness();
  h.send({ type: 'LEASE_ACQUIRE', executor: 'primary' });
  h.send({ type: 'NOW', reason: null, wait: true });
  h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: null });
  h.send({ type: 'HANDOFF_ACCEPTED', executor: 'emergency', receiver_root: '/clone', token: null });
  return h;
}

describe('the ways out status offers (docs/concepts.md, "Ways out")', () => {
  it('a blocked evacuation: resume first, cancel as the way out; paused: unpause first, cancel still offered', () => {
    const h = new Harness();
    h.send({ type: 'NOW', reason: null, wait: false });
    h.send({ type: 'DRAIN_BLOCKED', reason: 'push rejected', step: 'publish' });
    expect(ways(h)).toMatchObject({ situation: 'EVACUATE (blocked)', verbs: ['resume', 'cancel'] });
    h.send({ type: 'PAUSE_SET', scope: 'workspace', pause });
    expect(ways(h)).toMatchObject({ situation: 'paused', verbs: ['unpause', 'cancel'] });
  });

  it('an offer that travels through a remote is not offered for cancelling', () => {
    const h = new Harness();
    h.send({ type: 'NOW', reason: null, wait: false });
    h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: { name: 'origin', lease_head: 'abc' } });
    expect(ways(h)).toMatchObject({ situation: 'HANDOFF_READY', verbs: ['accept'] });
  });

  it('a return leg whose lease moved: fenced out until the new holder returns, with its token', () => {
    const h = taken();
    expect(ways(h)).toMatchObject({ situation: 'TAKEOVER (held)', verbs: ['return', 'lease break'] });
    expect(ways(h).next[0]).toMatchObject({ command: 'handoff return --token 2', repo: '/clone' });
    h.send({ type: 'RETURN_START', token: 2, wait: false });
    h.send({ type: 'LEASE_BREAK', reason: 'the receiver is gone' });
    expect(ways(h)).toMatchObject({ situation: 'TAKEOVER (return fenced out)', verbs: ['lease acquire', 'cancel'] });
    h.send({ type: 'LEASE_ACQUIRE', executor: 'rescuer' });
    expect(ways(h)).toMatchObject({ situation: 'TAKEOVER (return fenced out)', verbs: ['return', 'cancel'] });
    expect(ways(h).next[0]?.command).toBe('handoff return --token 3');
    h.send({ type: 'RETURN_START', token: 3, wait: false });
    expect(ways(h).situation).toBe('TAKEOVER (returning)');
  });

  it('a one-way cycle closes first; an emergency-return one offers close only after a cancelled return', () => {
    const h = taken();
    h.send({ type: 'RETURN_START', token: 2, wait: false });
    h.send({ type: 'CANCEL', reason: null });
    expect(ways(h).verbs).toEqual(['return', 'close --one-way', 'lease break']);
  });
});
