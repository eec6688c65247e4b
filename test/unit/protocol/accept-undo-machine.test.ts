import { describe, expect, it } from 'vitest';
import type { Cycle, RemoteLeaseRecord } from '../../../protocol/index.js';
import { Harness } from './machine-harness.js';

const verified = { mechanism: 'handoff_branch' as const, ref: 'refs/heads/handoff/x', commit: 'abc', verified: true };

function accepted(remote: { name: string; lease_head: string } | null = null): Harness {
  const h = new Harness();
  h.send({ type: 'LEASE_ACQUIRE', executor: 'primary' });
  h.send({ type: 'NOW', reason: null, wait: false });
  h.send({ type: 'DRAIN_STEP_DONE', step: 'inspect', record: { at: '2026-08-20T10:00:00.000Z', sha256: null, summary: {} } });
  h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote });
  h.send({ type: 'HANDOFF_ACCEPTED', executor: 'receiver', receiver_root: '/clone', token: null });
  return h;
}

const record = (cycle: string, state: RemoteLeaseRecord['state'], lastToken: number, holder: RemoteLeaseRecord['holder'] = null): RemoteLeaseRecord => ({
  schema_version: 1,
  cycle,
  state,
  holder,
  last_token: lastToken,
  manifest: { path: 'manifest.json', sha256: 'a'.repeat(64) },
  at: '2026-08-20T10:00:00.000Z',
});

describe('ACCEPT_UNDONE: an accept whose checkout failed goes back on offer', () => {
  it('TAKEOVER → HANDOFF_READY: nobody holds the lease, it is offered again, the spent token stays stale and the next accept gets a higher one', () => {
    const h = accepted();
    expect(h.send({ type: 'ACCEPT_UNDONE', token: 1, imported: false, reason: 'smudge failed', lease_head: null }).code).toBe('stale_token');
    const undone = h.send({ type: 'ACCEPT_UNDONE', token: 2, imported: false, reason: 'smudge failed', lease_head: null });
    expect([undone.code, undone.changed, h.state]).toEqual(['ok', true, 'HANDOFF_READY']);
    expect(h.context.lease).toMatchObject({ holder: null, offered: true, last_token: 2 });
    expect(h.context.cycle?.receiver).toBeNull();
    expect(h.send({ type: 'LEASE_RENEW', token: 2 }).code).toBe('stale_token');
    expect(h.send({ type: 'HANDOFF_ACCEPTED', executor: 'again', receiver_root: '/clone', token: null }).data).toEqual({ token: 3 });
  });

  it('an imported cycle goes back to NORMAL in the receiver, its token spent', () => {
    const h = new Harness();
    const cycle = accepted({ name: 'origin', lease_head: 'abc' }).context.cycle as Cycle;
    const imported: Cycle = { ...cycle, receiver: null, drain: { ...cycle.drain, steps: {} } };
    h.send({ type: 'IMPORT_TAKEOVER', cycle: imported, executor: 'laptop-b', token: 4, receiver_root: '/repo' });
    expect(h.state).toBe('TAKEOVER');
    h.send({ type: 'ACCEPT_UNDONE', token: 4, imported: true, reason: 'smudge failed', lease_head: 'def' });
    expect([h.state, h.context.cycle, h.context.lease.holder, h.context.lease.last_token]).toEqual(['NORMAL', null, null, 4]);
  });

  it('is refused where nothing was accepted, and during a return leg', () => {
    const h = new Harness();
    expect(h.send({ type: 'ACCEPT_UNDONE', token: 1, imported: false, reason: 'x', lease_head: null })).toMatchObject({ code: 'wrong_state', changed: false });
    const r = accepted();
    r.send({ type: 'RETURN_START', token: 2, wait: false });
    expect(r.send({ type: 'ACCEPT_UNDONE', token: 2, imported: false, reason: 'x', lease_head: null }).code).toBe('wrong_state');
  });
});

describe('the chain offers the lease again (REMOTE_LEASE after an undone accept elsewhere, or a crash before the journal)', () => {
  it('the source that saw the take goes back to HANDOFF_READY; an offer record older than the take changes nothing', () => {
    const h = accepted({ name: 'origin', lease_head: 'abc' });
    const id = h.context.cycle?.id ?? '';
    expect(h.send({ type: 'REMOTE_LEASE', lease: record(id, 'offered', 1), lease_head: 'old', return_drain: null }).changed).toBe(false);
    expect(h.state).toBe('TAKEOVER');
    h.send({ type: 'REMOTE_LEASE', lease: record(id, 'offered', 2), lease_head: 'def', return_drain: null });
    expect(h.state).toBe('HANDOFF_READY');
    expect(h.context.lease).toMatchObject({ holder: null, offered: true, last_token: 2 });
    expect(h.context.cycle?.remote).toEqual({ name: 'origin', lease_head: 'def' });
  });

  it('a receiver that imported the cycle goes back to NORMAL', () => {
    const h = new Harness();
    const cycle = accepted({ name: 'origin', lease_head: 'abc' }).context.cycle as Cycle;
    h.send({
      type: 'IMPORT_TAKEOVER',
      cycle: { ...cycle, receiver: null, drain: { ...cycle.drain, steps: {} } },
      executor: 'laptop-b',
      token: 4,
      receiver_root: '/repo',
    });
    h.send({ type: 'REMOTE_LEASE', lease: record(cycle.id, 'offered', 4), lease_head: 'def', return_drain: null });
    expect([h.state, h.context.lease.holder, h.context.lease.last_token]).toEqual(['NORMAL', null, 4]);
  });
});
