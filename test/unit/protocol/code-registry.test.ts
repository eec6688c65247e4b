import { describe, expect, it } from 'vitest';
import { CODES, codeSpec, exitCodeOf, failure, isSuccess, PROTOCOL_VERSION, success, type Code } from '../../../protocol/index.js';

const codes = Object.keys(CODES) as Code[];

// docs/codes.md is the reference (codes.test.ts checks it row for row); these pin what callers branch on.
describe('codes: what a caller reads from a code', () => {
  it('isSuccess is exactly a 2xx status, whatever the exit code (`handoff check` answers 1 and 2)', () => {
    for (const code of codes) expect(isSuccess(code)).toBe(CODES[code].status >= 200 && CODES[code].status < 300);
    expect([isSuccess('resume_needed'), isSuccess('cycle_completed'), isSuccess('wrong_state')]).toEqual([true, true, false]);
  });

  it('codeSpec is the registry entry of the code', () => {
    for (const code of codes) expect(codeSpec(code)).toBe(CODES[code]);
  });

  it('the registry is frozen: no caller can change a code at run time', () => {
    expect(Object.isFrozen(CODES)).toBe(true);
  });

  it('every failure envelope exits with its code and carries a message and a hint', () => {
    for (const code of codes.filter((c) => !isSuccess(c))) {
      const envelope = failure(code, 'what happened', 'what to do');
      expect(exitCodeOf(envelope)).toBe(CODES[code].exit);
      expect(envelope).toEqual({ code, data: null, authority: 'none', error: { message: 'what happened', hint: 'what to do' } });
    }
    expect(success('ok', { a: 1 })).toEqual({ code: 'ok', data: { a: 1 }, authority: 'none' });
  });

  it('the contract exit codes of the codes scripts branch on', () => {
    const exits = Object.fromEntries(
      (
        [
          'ok',
          'resume_needed',
          'cycle_completed',
          'stale',
          'ambiguous',
          'usage_error',
          'invalid_body',
          'daemon_unreachable',
          'corrupt_record',
          'remote_unreachable',
          'stale_token',
          'lease_held',
          'paused_denied',
        ] as const
      ).map((c) => [c, CODES[c].exit]),
    );
    expect(exits).toEqual({
      ok: 0,
      resume_needed: 1,
      cycle_completed: 2,
      stale: 10,
      ambiguous: 11,
      usage_error: 64,
      invalid_body: 65,
      daemon_unreachable: 69,
      corrupt_record: 74,
      remote_unreachable: 75,
      stale_token: 77,
      lease_held: 77,
      paused_denied: 77,
    });
    expect(PROTOCOL_VERSION).toBe(1);
  });
});
