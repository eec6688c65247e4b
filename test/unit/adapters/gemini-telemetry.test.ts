import { describe, expect, it } from 'vitest';
import { parseGeminiTelemetry, RECENT_ERROR_MS } from '../../../adapters/telemetry/index.js';
import { CTX, expectInvalidBody, FIXTURE_TIME } from './fixture-helpers.js';

const apiError = (attributes: Record<string, unknown>, pretty = false) =>
  JSON.stringify(
    {
      hrTime: [Math.floor(FIXTURE_TIME.getTime() / 1000) - 60, 0],
      attributes: { 'event.name': 'gemini_cli.api_error', 'session.id': 's-1', model: 'gemini-2.5-pro', ...attributes },
    },
    null,
    pretty ? 2 : undefined,
  );

describe('gemini-telemetry', () => {
  it('a 429 api_error is a warning; a numeric-string status counts; other statuses are events only', () => {
    const result = parseGeminiTelemetry(
      [apiError({ status_code: '429', error: 'Too Many Requests' }), apiError({ status_code: 500, error: 'Internal' })].join('\n'),
      CTX,
    );
    expect(result.warnings.map((w) => [w.kind, w.recovers, w.executor])).toEqual([['rate_limit', null, 's-1']]);
    expect(result.events.map((e) => e.detail['status_code'])).toEqual(['429', '500']);
    expect(result.readings).toEqual([]);
  });

  it('an error older than the recent window is history: an event, never a warning', () => {
    const old = new Date(FIXTURE_TIME.getTime() - RECENT_ERROR_MS - 1000).toISOString();
    const result = parseGeminiTelemetry(apiError({ status_code: 429, 'event.timestamp': old }), CTX);
    expect(result.warnings).toEqual([]);
    expect(result.events).toHaveLength(1);
  });

  it('token counts never become a reading', () => {
    const response = JSON.stringify({
      attributes: { 'event.name': 'gemini_cli.api_response', input_token_count: 190000, total_token_count: 200000, status_code: 200 },
    });
    const result = parseGeminiTelemetry(response, CTX);
    expect(result.readings).toEqual([]);
    expect(result.unknown.map((u) => u.reason)).toEqual([
      expect.stringMatching(/never a quota percentage/) as string,
      expect.stringMatching(/never a quota percentage/) as string,
    ]);
  });

  it('pretty-printed records one after another; a stray line is skipped by number; a record still being written waits', () => {
    const raw = `${apiError({ status_code: 429 }, true)}\nnot json at all\n${apiError({ status_code: 429 }, true)}\n{"attributes": {"event.name": "gemini_cli.api_`;
    const result = parseGeminiTelemetry(raw, CTX);
    expect(result.warnings).toHaveLength(2);
    expect(result.skipped.map((s) => s.line)).toEqual([raw.split('\n').indexOf('not json at all') + 1]);
  });

  it('a JSONL session (0.61+): metadata line, messages, $set and $rewindTo; an error message re-written or $set again warns once', () => {
    const at = new Date(FIXTURE_TIME.getTime() - 30_000).toISOString();
    const error = { id: 'e-1', timestamp: at, type: 'error', content: [{ text: '[API Error: ' }, { text: 'RESOURCE_EXHAUSTED: quota exceeded per day]' }] };
    const lines = [
      { sessionId: 's-9', projectHash: 'ab'.repeat(32), startTime: at, lastUpdated: at, kind: 'main' },
      { id: 'u-1', timestamp: at, type: 'user', content: [{ text: 'hit the 429 please' }] },
      error,
      { $set: { lastUpdated: at } },
      { $set: { messages: [{ id: 'u-1', timestamp: at, type: 'user', content: 'hit the 429 please' }, error], lastUpdated: at } },
      { $rewindTo: 'u-1' },
      { id: 'e-2', timestamp: at, type: 'error', content: 'Request cancelled.' },
    ];
    const result = parseGeminiTelemetry(lines.map((line) => JSON.stringify(line)).join('\n') + '\n', CTX);
    expect(result.warnings.map((w) => [w.kind, w.recovers, w.executor, w.observed_at])).toEqual([['insufficient_quota', false, 's-9', at]]);
    expect(result.events.map((e) => [e.name, e.detail['id']])).toEqual([['quota_error', 'e-1']]);
    expect(result.route.session_id).toBe('s-9');
    expect(result.skipped).toEqual([]);
  });

  it('refuses a payload with no JSON object in it', () => {
    expect(expectInvalidBody(() => parseGeminiTelemetry('hello\n', CTX)).hint).toMatch(/telemetry\.outfile/);
  });
});
