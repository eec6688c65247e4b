import { describe, expect, it } from 'vitest';
import {
  checkCode,
  exitCodeOf,
  failure,
  fromError,
  HandoffError,
  isHandoffError,
  outcomeEnvelope,
  shellQuote,
  SPOOLED_NAME,
  success,
} from '../../../protocol/index.js';
import { Harness, VERIFIED } from './machine-harness.js';

/** What a caller gets back: the Envelope of every `--json` output and HTTP body, and `handoff check`'s code. */
describe('envelopes', () => {
  it('never grant authority, and carry the message and hint of a failure', () => {
    expect(success('ok', { a: 1 })).toEqual({ code: 'ok', data: { a: 1 }, authority: 'none' });
    expect(failure('stale_token', 'm', 'h')).toEqual({ code: 'stale_token', data: null, authority: 'none', error: { message: 'm', hint: 'h' } });
    expect(exitCodeOf(failure('stale_token', 'm', 'h'))).toBe(77);
    expect(exitCodeOf(success('ok', null))).toBe(0);
  });

  it('an expected error becomes the envelope of its code, keeping message, hint and data', () => {
    const error = new HandoffError('stale_token', 'token 3 is stale', 'run `handoff lease show`', { token: 3 });
    expect([error.name, error.message, isHandoffError(error), isHandoffError(new Error('x'))]).toEqual(['HandoffError', 'token 3 is stale', true, false]);
    expect(fromError(error)).toEqual(failure('stale_token', 'token 3 is stale', 'run `handoff lease show`', { token: 3 }));
    expect(new HandoffError('ok', 'm', 'h').data).toBeNull();
  });

  it("answers a machine's outcome with where the workspace now stands", () => {
    const h = new Harness();
    const moved = h.send({ type: 'NOW', reason: null, wait: false });
    expect(outcomeEnvelope(moved, h.snapshot)).toMatchObject({
      code: moved.code,
      data: { workspace: '/repo', state: 'EVACUATE', changed: true, note: moved.message },
    });
    const refused = h.send({ type: 'LEASE_RELEASE', token: 9 });
    const answer = outcomeEnvelope(refused, h.snapshot);
    expect(answer).toMatchObject({
      code: 'stale_token',
      data: { workspace: '/repo', state: 'EVACUATE' },
      error: { message: refused.message, hint: refused.hint },
    });
    const bare = outcomeEnvelope({ code: 'stale_token', message: null, hint: null, data: null, changed: false }, h.snapshot);
    expect(bare.error).toEqual({ message: 'stale_token', hint: 'see `handoff status`' });
  });
});

describe('handoff check', () => {
  it('1 when an evacuation stopped before it finished, 2 when the last cycle completed, 0 otherwise', () => {
    const h = new Harness();
    expect(checkCode(h.snapshot, false)).toBe('check_clear');
    h.reading('five_hour', 85);
    expect(checkCode(h.snapshot, false)).toBe('check_clear');
    h.send({ type: 'NOW', reason: null, wait: false });
    expect([checkCode(h.snapshot, true), checkCode(h.snapshot, false)]).toEqual(['check_clear', 'resume_needed']);
    h.send({ type: 'DRAIN_BLOCKED', reason: 'push rejected', step: 'publish' });
    expect(checkCode(h.snapshot, true)).toBe('resume_needed');
    h.send({ type: 'DRAIN_RESUME' });
    h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: VERIFIED, remote: null });
    expect(checkCode(h.snapshot, false)).toBe('cycle_completed');
    h.send({ type: 'HANDOFF_ACCEPTED', executor: 'r', receiver_root: '/clone', token: null });
    expect(checkCode(h.snapshot, false)).toBe('check_clear');
    const token = h.context.lease.holder?.token ?? 0;
    h.send({ type: 'RETURN_START', token, wait: false });
    expect([checkCode(h.snapshot, true), checkCode(h.snapshot, false)]).toEqual(['check_clear', 'resume_needed']);
  });
});

describe('small agreements', () => {
  it('a quoted path is one literal shell word, whatever quotes it holds', () => {
    expect(shellQuote('/a b/c')).toBe("'/a b/c'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
  });

  it('the daemon reads only complete spooled payloads', () => {
    expect(SPOOLED_NAME.test('1764900000000-0123456789ab.json')).toBe(true);
    for (const name of [
      '.1764900000000-0123456789ab.json',
      '1764900000000-0123456789ab.json.tmp',
      '176490000000-0123456789ab.json',
      'x1764900000000-0123456789ab.json',
    ]) {
      expect(SPOOLED_NAME.test(name), name).toBe(false);
    }
  });
});
