import { describe, expect, it } from 'vitest';
import { parseAnthropicHeaders, parseOpenaiHeaders } from '../../../adapters/telemetry/index.js';
import { CTX, expectSchemaValid, fixture } from './fixture-helpers.js';

const warningsOf = (result: ReturnType<typeof parseOpenaiHeaders>) => result.warnings.map((w) => [w.kind, w.recovers, w.retry_after_seconds]);

const after = (headers: string, body: string) => `${headers.trimEnd()}\r\n\r\n${body}`;

describe('429 bodies, after the headers and alone', () => {
  const openai429 = 'HTTP/2 429\r\ncontent-type: application/json\r\nx-ratelimit-limit-requests: 5000\r\nx-ratelimit-remaining-requests: 0\r\n';
  const anthropic429 = 'HTTP/2 429\r\ncontent-type: application/json\r\nretry-after: 20\r\n';

  it('OpenAI insufficient_quota after the headers: one warning that does not recover, and the header readings', () => {
    const result = parseOpenaiHeaders(after(openai429, fixture('http/openai.429.quota.body.json')), CTX);
    expect(warningsOf(result)).toEqual([['insufficient_quota', false, null]]);
    expect(result.readings.map((r) => [r.metric, r.used_percent])).toEqual([['requests', 100]]);
    expectSchemaValid(result);
  });

  it('OpenAI insufficient_quota alone', () => {
    const result = parseOpenaiHeaders(fixture('http/openai.429.quota.body.json'), CTX);
    expect(warningsOf(result)).toEqual([['insufficient_quota', false, null]]);
    expect(result.readings).toEqual([]);
  });

  it('OpenAI rate_limit_exceeded after headers with retry-after: recovers, after that wait', () => {
    const result = parseOpenaiHeaders(after(`${openai429}retry-after: 20\r\n`, fixture('http/openai.429.rate.body.json')), CTX);
    expect(warningsOf(result)).toEqual([['rate_limit', true, 20]]);
  });

  it('OpenAI rate_limit_exceeded alone', () => {
    expect(warningsOf(parseOpenaiHeaders(fixture('http/openai.429.rate.body.json'), CTX))).toEqual([['rate_limit', true, null]]);
  });

  it('Anthropic spend cap after the headers: spend_cap, does not recover, no wait promised', () => {
    const result = parseAnthropicHeaders(after('HTTP/2 429\r\ncontent-type: application/json\r\n', fixture('http/anthropic.429.spend-cap.body.json')), CTX);
    expect(warningsOf(result)).toEqual([['spend_cap', false, null]]);
    expectSchemaValid(result);
  });

  it('Anthropic spend cap alone', () => {
    expect(warningsOf(parseAnthropicHeaders(fixture('http/anthropic.429.spend-cap.body.json'), CTX))).toEqual([['spend_cap', false, null]]);
  });

  it('Anthropic rate_limit_error after headers with retry-after, and alone', () => {
    expect(warningsOf(parseAnthropicHeaders(after(anthropic429, fixture('http/anthropic.429.body.json')), CTX))).toEqual([['rate_limit', true, 20]]);
    expect(warningsOf(parseAnthropicHeaders(fixture('http/anthropic.429.body.json'), CTX))).toEqual([['rate_limit', true, null]]);
  });

  it('a body that is no provider error (a gateway page) leaves the bare 429 warning', () => {
    const result = parseOpenaiHeaders(after(openai429, '<html>Too Many Requests</html>'), CTX);
    expect(warningsOf(result)).toEqual([['rate_limit', null, null]]);
  });

  it('a 200 with a body gives no warning', () => {
    expect(parseOpenaiHeaders(after(fixture('http/openai.200.headers.txt'), '{"id":"chatcmpl-1","object":"chat.completion"}'), CTX).warnings).toEqual([]);
  });
});
