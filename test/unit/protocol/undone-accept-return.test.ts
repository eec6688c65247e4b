import { describe, expect, it } from 'vitest';
import { persist, restoreSnapshot } from '../../../protocol/index.js';
import { bodyOf, Harness, SCRIPTS } from './machine-harness.js';

describe('an accept undone on the chain while its return leg runs', () => {
  it('takes the return with it: the next accept holds, and a restart from the journal agrees', () => {
    const h = new Harness();
    for (const intent of SCRIPTS['returning'] ?? []) {
      h.send(bodyOf(intent, h.at, h.context));
      h.advance(7);
    }
    expect(h.snapshot.value).toEqual({ TAKEOVER: 'returning' });
    const { last_token } = h.context.lease;
    const reoffered = h.send({
      type: 'REMOTE_LEASE',
      lease: {
        schema_version: 1,
        cycle: h.context.cycle?.id ?? '',
        state: 'offered',
        holder: null,
        last_token,
        manifest: { path: 'manifest.json', sha256: 'a'.repeat(64) },
        at: new Date(h.at).toISOString(),
      },
      lease_head: 'reoffered',
      return_drain: null,
      receiver_root: null,
    });
    expect([reoffered.code, h.state, h.context.cycle?.return_drain]).toEqual(['ok', 'HANDOFF_READY', null]);

    expect(h.send({ type: 'HANDOFF_ACCEPTED', executor: 'second', receiver_root: '/clone', token: null }).code).toBe('accepted');
    expect(h.snapshot.value).toEqual({ TAKEOVER: 'held' });
    expect(restoreSnapshot(persist(h.snapshot)).value).toEqual({ TAKEOVER: 'held' });
  });
});
