import { describe, expect, it } from 'vitest';
import { createStepScope, persist, restoreSnapshot, stateOf, step, type WorkspaceEvent, type WorkspaceSnapshot } from '../../../protocol/index.js';
import { foldJournal } from '../../../daemon/workspaces/journal-fold.js';
import { Harness, T0 } from '../protocol/machine-harness.js';

const verified = { mechanism: 'handoff_branch' as const, ref: 'refs/heads/handoff/x', commit: 'abc', verified: true };

function takenOver(): Harness {
  const h = new Harness();
  h.send({ type: 'LEASE_ACQUIRE', executor: 'primary' });
  h.send({ type: 'NOW', reason: null, wait: false });
  h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: null });
  h.send({ type: 'HANDOFF_ACCEPTED', executor: 'emergency', receiver_root: '/clone', token: null });
  return h;
}

/** A journal as the machine without TAKEOVER's children wrote it: the flat state and a context without `stage`. */
function oldJournal(h: Harness): WorkspaceSnapshot {
  const { state, context } = persist(h.snapshot);
  const older: Record<string, unknown> = { ...context };
  delete older['stage'];
  const folded = foldJournal([{ kind: 'snapshot', root: '/repo', state, context: older }]).get('/repo');
  if (folded === undefined) throw new Error('the journal folded to nothing');
  return restoreSnapshot(folded);
}

type Body<E> = E extends WorkspaceEvent ? Omit<E, 'at' | 'entropy'> : never;
const send = (snapshot: WorkspaceSnapshot, event: Body<WorkspaceEvent>) =>
  step(createStepScope(snapshot), snapshot, { ...event, at: T0, entropy: 'k3f7qa' } as WorkspaceEvent);

describe('a journal written with the flat TAKEOVER state', () => {
  it('restores into `held` when no return leg runs: the holder may start one, drain reports are refused', () => {
    const restored = oldJournal(takenOver());
    expect(restored.value).toEqual({ TAKEOVER: 'held' });
    expect(stateOf(restored)).toBe('TAKEOVER');
    expect(persist(restored).state).toBe('TAKEOVER');
    const report = send(restored, { type: 'DRAIN_WAITED', why: 'no_wait' });
    expect([report.outcome.code, report.outcome.message]).toEqual(['wrong_state', 'drain_waited is not possible in TAKEOVER']);
    const started = send(restored, { type: 'RETURN_START', token: 2, wait: false });
    expect([started.outcome.code, started.next.value, started.effects]).toEqual(['return_started', { TAKEOVER: 'returning' }, ['startDrain']]);
  });

  it('restores into `returning` when the return leg was started: its drain reports are taken and it can be cancelled', () => {
    const h = takenOver();
    h.send({ type: 'RETURN_START', token: 2, wait: false });
    const restored = oldJournal(h);
    expect(restored.value).toEqual({ TAKEOVER: 'returning' });
    expect(stateOf(restored)).toBe('TAKEOVER');
    const waited = send(restored, { type: 'DRAIN_WAITED', why: 'no_wait' });
    expect([waited.outcome.code, waited.outcome.changed]).toEqual(['ok', true]);
    expect(waited.next.context.cycle?.return_drain?.waited?.why).toBe('no_wait');
    const cancelled = send(restored, { type: 'CANCEL', reason: null });
    expect([cancelled.outcome.code, cancelled.next.value]).toEqual(['cancelled', { TAKEOVER: 'held' }]);
  });
});

describe('the one refusal for what a state does not allow', () => {
  it('names the state the workspace is in and its way on, in every state', () => {
    const h = new Harness();
    h.send({ type: 'LEASE_ACQUIRE', executor: 'primary' });
    const refusal = () => h.send({ type: 'DRAIN_RESUME' });
    expect(refusal()).toMatchObject({
      code: 'wrong_state',
      changed: false,
      message: 'drain_resume is not possible in NORMAL',
      hint: expect.stringMatching(/handoff now/),
    });
    h.send({ type: 'NOW', reason: null, wait: false });
    expect(h.send({ type: 'RETURN_START', token: 1, wait: false })).toMatchObject({ message: 'return_start is not possible in EVACUATE' });
    h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: null });
    expect(refusal()).toMatchObject({ message: 'drain_resume is not possible in HANDOFF_READY', hint: expect.stringMatching(/handoff accept/) });
    h.send({ type: 'HANDOFF_ACCEPTED', executor: 'emergency', receiver_root: '/clone', token: null });
    expect(refusal()).toMatchObject({ message: 'drain_resume is not possible in TAKEOVER', hint: expect.stringMatching(/handoff return/) });
    h.send({ type: 'RETURN_START', token: 2, wait: false });
    expect(h.send({ type: 'HANDOFF_ACCEPTED', executor: 'x', receiver_root: '/x', token: null })).toMatchObject({
      message: 'handoff_accepted is not possible in TAKEOVER',
    });
    h.send({ type: 'RETURN_READY', token: 2, checkpoint: verified });
    expect(refusal()).toMatchObject({ message: 'drain_resume is not possible in RETURN_HANDOFF_READY' });
    h.send({ type: 'RETURN_ACCEPTED', executor: 'primary', token: null });
    expect(h.state).toBe('CLOSED');
    expect(refusal()).toMatchObject({ message: 'drain_resume is not possible in CLOSED', hint: expect.stringMatching(/cycle is closed/) });
  });
});
