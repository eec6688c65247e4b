import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { parseProviderErrorBody } from '../../../adapters/telemetry/index.js';
import { CTX, expectInvalidBody, expectSchemaValid, fixture, FIXTURE_ISO } from './fixture-helpers.js';

function sha(raw: string): string {
  return createHash('sha256').update(raw).digest('hex');
}

describe('parseProviderErrorBody fixtures', () => {
  it('http/anthropic.429.body.json → rate_limit, recovers by waiting', () => {
    const raw = fixture('http/anthropic.429.body.json');
    const warnings = parseProviderErrorBody('anthropic', raw, CTX);
    expect(warnings).toEqual([
      {
        source: 'anthropic-headers',
        kind: 'rate_limit',
        text:
          "This request would exceed your organization's rate limit of 2,000,000 input tokens per minute. " +
          'For details, refer to: https://docs.claude.com/en/api/rate-limits.',
        recovers: true,
        retry_after_seconds: null,
        observed_at: FIXTURE_ISO,
        raw_sha256: sha(raw),
        executor: null,
      },
    ]);
    expectSchemaValid({ warnings });
  });

  it('http/anthropic.429.spend-cap.body.json → spend_cap, does not recover by waiting', () => {
    const raw = fixture('http/anthropic.429.spend-cap.body.json');
    const warnings = parseProviderErrorBody('anthropic', raw, CTX);
    expect(warnings.map((w) => [w.source, w.kind, w.recovers, w.retry_after_seconds])).toEqual([['anthropic-headers', 'spend_cap', false, null]]);
    expect(warnings[0]?.text).toMatch(/^You have reached your API usage limits/);
    expect(warnings[0]?.raw_sha256).toBe(sha(raw));
  });

  it('http/openai.429.rate.body.json → rate_limit, recovers', () => {
    const raw = fixture('http/openai.429.rate.body.json');
    const warnings = parseProviderErrorBody('openai', raw, CTX);
    expect(warnings.map((w) => [w.source, w.kind, w.recovers, w.observed_at])).toEqual([['openai-headers', 'rate_limit', true, FIXTURE_ISO]]);
    expect(warnings[0]?.text).toMatch(/^Rate limit reached for gpt-4o-mini/);
  });

  it('http/openai.429.quota.body.json → insufficient_quota, does not recover', () => {
    const warnings = parseProviderErrorBody('openai', fixture('http/openai.429.quota.body.json'), CTX);
    expect(warnings.map((w) => [w.kind, w.recovers, w.text])).toEqual([
      ['insufficient_quota', false, 'You exceeded your current quota, please check your plan and billing details.'],
    ]);
    expectSchemaValid({ warnings });
  });
});

describe('parseProviderErrorBody other bodies', () => {
  it('gives no warning for errors that are not limits', () => {
    expect(parseProviderErrorBody('anthropic', JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'bad' } }), CTX)).toEqual([]);
    expect(parseProviderErrorBody('openai', JSON.stringify({ error: { message: 'nope', type: 'invalid_request_error', code: null } }), CTX)).toEqual([]);
  });

  it('refuses a body that is not JSON or has no error object', () => {
    const notJson = expectInvalidBody(() => parseProviderErrorBody('anthropic', '<html>', CTX));
    expect(notJson.message).toMatch(/^anthropic-error-body: the payload is not valid JSON/);
    expect(expectInvalidBody(() => parseProviderErrorBody('openai', '{"message": "x"}', CTX)).message).toBe('openai-error-body: the body has no error object');
  });
});
