import { describe, expect, it } from 'vitest';
import { clipBytes, decideContext, stageOf, type SessionRecord } from '../../../protocol/index.js';
import { Harness, PAUSE, VERIFIED } from './machine-harness.js';

const capsule = (at: number, over: { sha256?: string | null; error?: string | null } = {}) => ({
  sha256: 'a'.repeat(64),
  updated_at: new Date(at).toISOString(),
  error: null,
  ...over,
});

/** The stage the context rules see: what a session is asked, keyed by what it was already told. */
describe('stageOf at the edges', () => {
  it('a capsule written at the very instant PREPARE began answers it; one without a digest does not', () => {
    const h = new Harness();
    h.send({ type: 'PREPARE', reason: 'test' });
    h.send({ type: 'CAPSULE_SET', capsule: capsule(h.at) });
    expect(stageOf(h.state, h.context).capsuleFresh).toBe(true);
    h.send({ type: 'CAPSULE_SET', capsule: capsule(h.at, { sha256: null }) });
    expect(stageOf(h.state, h.context).capsuleFresh).toBe(false);
  });

  it('paused for this workspace or for all of them, either way', () => {
    for (const scope of ['workspace', 'global'] as const) {
      const h = new Harness();
      h.send({ type: 'PAUSE_SET', scope, pause: PAUSE });
      expect(stageOf(h.state, h.context).paused, scope).toBe(true);
    }
  });

  it('TAKEOVER names its holder; while the return leg drains it is another stage, keyed by the return', () => {
    const h = new Harness();
    h.send({ type: 'NOW', reason: null, wait: false });
    h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: VERIFIED, remote: null });
    h.send({ type: 'HANDOFF_ACCEPTED', executor: 'receiver', receiver_root: '/clone', token: null });
    expect(stageOf(h.state, h.context)).toMatchObject({ state: 'TAKEOVER', holder: 'receiver', returning: false, stage: `TAKEOVER@${h.context.stage_since}` });
    h.advance(30);
    h.send({ type: 'RETURN_START', token: h.context.lease.holder?.token ?? 0, wait: false });
    expect(stageOf(h.state, h.context)).toMatchObject({ state: 'TAKEOVER', returning: true, stage: `TAKEOVER-return@${new Date(h.at).toISOString()}` });
  });
});

describe('the PREPARE reminder counts tool calls only', () => {
  it('prompts after the notice never bring the reminder on', () => {
    const prepare = { state: 'PREPARE' as const, stage: 'PREPARE@x', returning: false, paused: false, holder: null, capsuleFresh: false };
    let record: SessionRecord | null = null;
    const told = (['UserPromptSubmit', 'UserPromptSubmit', 'UserPromptSubmit', 'UserPromptSubmit'] as const).map((event) => {
      const decision = decideContext(record, prepare, event, 's1', 2);
      record = decision.record;
      return decision.kind;
    });
    expect(told).toEqual(['prepare', null, null, null]);
  });
});

describe('clipBytes never leaves half a character', () => {
  it('a cut inside a character drops the whole character', () => {
    expect(clipBytes('中中', 5)).toBe('…');
  });
});
