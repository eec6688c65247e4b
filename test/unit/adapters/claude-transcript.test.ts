import { describe, expect, it } from 'vitest';
import { lastApiError, transcriptOfSessionEnd } from '../../../adapters/telemetry/claude-transcript.js';

const SESSION = '9d2f4b61-3c8a-4e7d-a15f-6b0e2c9d8a73';
const line = (record: Record<string, unknown>) => JSON.stringify({ sessionId: SESSION, timestamp: '2026-08-20T09:59:58.412Z', ...record });
const apiError = line({ type: 'assistant', isApiErrorMessage: true, error: 'rate_limit' });
const answer = line({ type: 'assistant', message: { content: [{ type: 'text', text: 'done' }] } });
// What Claude Code writes after the last answer, at exit.
const bookkeeping = [line({ type: 'last-prompt', lastPrompt: 'hi' }), line({ type: 'cost-state', totalCostUSD: 0 })];
const tail = (...lines: string[]) => `${lines.join('\n')}\n`;

describe('the stop a headless Claude Code session ended on, from its transcript', () => {
  it('the last assistant record, when it is an API error of this session, with its time', () => {
    expect(lastApiError(tail(line({ type: 'user' }), apiError, ...bookkeeping), SESSION, true)).toEqual({
      line: apiError,
      atMs: Date.parse('2026-08-20T09:59:58.412Z'),
    });
  });

  it('an error the session got past, another session, or no answer at all: nothing', () => {
    expect(lastApiError(tail(apiError, line({ type: 'user' }), answer, ...bookkeeping), SESSION, true)).toBeNull();
    expect(lastApiError(tail(apiError), 'another-session', true)).toBeNull();
    expect(lastApiError(tail(...bookkeeping), SESSION, true)).toBeNull();
    expect(lastApiError(tail(line({ type: 'assistant', isApiErrorMessage: true, timestamp: 'yesterday' })), SESSION, true)).toBeNull();
  });

  it('the first line of a tail cut from a longer file is never read: a cut-off answer cannot let an older error through', () => {
    // The window may start anywhere in a line; what looks whole there may be the end of a longer one.
    expect(lastApiError(tail(apiError, ...bookkeeping), SESSION, false)).toBeNull();
    expect(lastApiError(`"partial": "the end of a line\n${tail(apiError, ...bookkeeping)}`, SESSION, false)?.line).toBe(apiError);
  });

  it('only a SessionEnd payload names a transcript to read', () => {
    const end = { hook_event_name: 'SessionEnd', session_id: SESSION, transcript_path: '/home/dev/.claude/projects/p/s.jsonl', reason: 'other' };
    expect(transcriptOfSessionEnd(JSON.stringify(end))).toEqual({ path: end.transcript_path, sessionId: SESSION });
    expect(transcriptOfSessionEnd(JSON.stringify({ ...end, hook_event_name: 'StopFailure' }))).toBeNull();
    expect(transcriptOfSessionEnd(JSON.stringify({ ...end, transcript_path: 7 }))).toBeNull();
    expect(transcriptOfSessionEnd(JSON.stringify({ ...end, session_id: '' }))).toBeNull();
    expect(transcriptOfSessionEnd('not json')).toBeNull();
  });
});
