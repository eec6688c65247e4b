import { describe, expect, it } from 'vitest';
import { judgeTakeover, refusedAcceptHint, type ReceiverObservation } from '../../../protocol/index.js';
import { Harness } from './machine-harness.js';

const verified = { mechanism: 'handoff_branch' as const, ref: 'refs/heads/handoff/x', commit: 'abc', verified: true };

describe('hints name the cycle the daemon knows, never a CYCLE placeholder', () => {
  it('a refusal in HANDOFF_READY and in RETURN_HANDOFF_READY names the accept of that cycle', () => {
    const h = new Harness();
    h.send({ type: 'LEASE_ACQUIRE', executor: 'primary' });
    h.send({ type: 'NOW', reason: null, wait: false });
    h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: null });
    expect(h.state).toBe('HANDOFF_READY');
    const id = h.context.cycle?.id ?? '';
    const early = h.send({ type: 'RETURN_START', token: 1, wait: false });
    expect(early.code).toBe('wrong_state');
    expect(early.hint).toBe(`a receiver takes over with \`handoff accept ${id}\``);

    h.send({ type: 'HANDOFF_ACCEPTED', executor: 'emergency', receiver_root: '/clone', token: null });
    h.send({ type: 'RETURN_START', token: 2, wait: false });
    h.send({ type: 'RETURN_READY', token: 2, checkpoint: verified });
    expect(h.state).toBe('RETURN_HANDOFF_READY');
    const cancel = h.send({ type: 'CANCEL', reason: null });
    expect(cancel.code).toBe('wrong_state');
    expect(cancel.message).toContain(`\`handoff accept ${id} --return\``);
    expect(`${cancel.message ?? ''} ${cancel.hint ?? ''}`).not.toMatch(/CYCLE|NAME|EXECUTOR/);
  });
});

describe('refusedAcceptHint: the command that works once the failed check is dealt with', () => {
  const manifest = {
    cycle_id: '20261205T060000Z-abcdef',
    leg: 'out',
    created_at: new Date(0).toISOString(),
    repository: { root_commit: 'a'.repeat(40), remote_url: null, instructions: [] },
    checkpoint: { tree: 't'.repeat(40), commit: 'c'.repeat(40), ref: null },
  } as unknown as Parameters<typeof judgeTakeover>[0];
  const receiver = (over: Partial<ReceiverObservation>): ReceiverObservation => ({
    root_commit: 'a'.repeat(40),
    remote_urls: [],
    commit_present: true,
    commit_source: 'present',
    head: null,
    tree: 'u'.repeat(40),
    differences: [],
    checkout: 'would_move',
    instructions: [],
    ...over,
  });
  const hint = (observed: ReceiverObservation, from: string | null = 'origin') =>
    refusedAcceptHint({ cycle: manifest.cycle_id, leg: 'out', from, judgement: judgeTakeover(manifest, observed, 0, 24), checkout: observed.checkout });

  it('another repository: where to accept, not a flag that cannot help (--checkout)', () => {
    const said = hint(receiver({ root_commit: 'b'.repeat(40) }));
    expect(said).toBe(`this checkout is another repository: run \`handoff accept ${manifest.cycle_id} --from origin\` in a clone of the source's repository`);
    expect(said).not.toMatch(/--checkout/);
  });

  it('changes of its own: the stash and the accept, one line that runs as printed', () => {
    expect(hint(receiver({ checkout: 'refused_dirty' }), null)).toContain(`\`git stash push --include-untracked && handoff accept ${manifest.cycle_id}\``);
  });
});
