import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { parseAnthropicHeaders } from '../../../adapters/telemetry/index.js';
import type { Reading } from '../../../schemas/telemetry.schema.js';
import { CTX, expectInvalidBody, expectSchemaValid, fixture, FIXTURE_ISO, metrics } from './fixture-helpers.js';

const FIXTURE = 'http/anthropic.api-key.200.headers.txt';
/** 2026-08-20T09:00:01Z, the fixture's RFC 3339 resets. */
const RESET_0901 = 1787216401;

function withoutSha(readings: Reading[]): Omit<Reading, 'raw_sha256'>[] {
  return readings.map(({ raw_sha256: _sha, ...rest }) => rest);
}

function headerText(status: number, headers: Record<string, string>): string {
  return [`HTTP/2 ${status}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), ''].join('\r\n');
}

describe('anthropic-headers fixture', () => {
  it(`${FIXTURE} → requests 1/4000 and the fullest token family (input 3000/2000000), RFC 3339 resets`, () => {
    const raw = fixture(FIXTURE);
    const common = {
      source: 'anthropic-headers',
      observed_at: FIXTURE_ISO,
      raw_sha256: createHash('sha256').update(raw).digest('hex'),
      executor: null,
    };
    const result = parseAnthropicHeaders(raw, CTX);
    expect(result.readings).toEqual([
      { ...common, metric: 'requests', used_percent: 0.025, resets_at: RESET_0901 },
      { ...common, metric: 'tokens', used_percent: 0.15, resets_at: RESET_0901 },
    ]);
    expect(result.unknown).toEqual([
      { metric: 'five_hour', reason: 'anthropic-ratelimit-unified-5h-utilization is missing (sent on subscription responses only)' },
      { metric: 'seven_day', reason: 'anthropic-ratelimit-unified-7d-utilization is missing (sent on subscription responses only)' },
    ]);
    expect(result.warnings).toEqual([]);
    expect(result.events).toEqual([]);
    expect(result.route).toEqual({ cwd: null, session_id: null });
    expectSchemaValid(result);
  });

  it('gives the same readings from a JSON object of name → value (any case, numbers allowed)', () => {
    const text = parseAnthropicHeaders(fixture(FIXTURE), CTX);
    const json = parseAnthropicHeaders(
      JSON.stringify({
        'Anthropic-RateLimit-Requests-Limit': 4000,
        'anthropic-ratelimit-requests-remaining': '3999',
        'anthropic-ratelimit-requests-reset': '2026-08-20T09:00:01Z',
        'anthropic-ratelimit-input-tokens-limit': '2000000',
        'ANTHROPIC-RATELIMIT-INPUT-TOKENS-REMAINING': 1997000,
        'anthropic-ratelimit-input-tokens-reset': '2026-08-20T09:00:01Z',
        'anthropic-ratelimit-output-tokens-limit': '400000',
        'anthropic-ratelimit-output-tokens-remaining': '400000',
        'anthropic-ratelimit-output-tokens-reset': '2026-08-20T09:00:00Z',
        'anthropic-ratelimit-tokens-limit': '2400000',
        'anthropic-ratelimit-tokens-remaining': '2397000',
        'anthropic-ratelimit-tokens-reset': '2026-08-20T09:00:01Z',
      }),
      CTX,
    );
    expect(withoutSha(json.readings)).toEqual(withoutSha(text.readings));
    expect(json.unknown).toEqual(text.unknown);
  });
});

describe('anthropic-headers token families', () => {
  it("keeps the fullest token family, with that family's reset", () => {
    const result = parseAnthropicHeaders(
      headerText(200, {
        'anthropic-ratelimit-tokens-limit': '1000',
        'anthropic-ratelimit-tokens-remaining': '900',
        'anthropic-ratelimit-tokens-reset': '2026-08-20T10:01:00Z',
        'anthropic-ratelimit-output-tokens-limit': '100',
        'anthropic-ratelimit-output-tokens-remaining': '20',
        'anthropic-ratelimit-output-tokens-reset': '2026-08-20T10:00:30+00:00',
        'anthropic-ratelimit-input-tokens-limit': '1000',
        'anthropic-ratelimit-input-tokens-remaining': '500',
      }),
      CTX,
    );
    expect(result.readings.map((r) => [r.metric, r.used_percent, r.resets_at])).toEqual([['tokens', 80, 1787220030]]);
  });

  it('lists requests and tokens unknown when limits are 0, -1, missing or not numbers', () => {
    const result = parseAnthropicHeaders(
      headerText(200, {
        'anthropic-ratelimit-requests-limit': '0',
        'anthropic-ratelimit-requests-remaining': '0',
        'anthropic-ratelimit-tokens-limit': '-1',
        'anthropic-ratelimit-tokens-remaining': '5',
        'anthropic-ratelimit-input-tokens-remaining': '5',
        'anthropic-ratelimit-output-tokens-limit': 'lots',
        'anthropic-ratelimit-output-tokens-remaining': '5',
      }),
      CTX,
    );
    expect(result.readings).toEqual([]);
    expect(result.unknown.filter((u) => u.metric === 'requests' || u.metric === 'tokens')).toEqual([
      { metric: 'requests', reason: 'anthropic-ratelimit-requests-limit is 0 (no usable limit reported)' },
      {
        metric: 'tokens',
        reason:
          'anthropic-ratelimit-input-tokens-limit is missing; ' +
          'anthropic-ratelimit-output-tokens-limit is not a number: "lots"; ' +
          'anthropic-ratelimit-tokens-limit is -1 (no usable limit reported)',
      },
    ]);
  });

  it('keeps a reading with a null reset when the reset is not RFC 3339', () => {
    const result = parseAnthropicHeaders(
      headerText(200, {
        'anthropic-ratelimit-requests-limit': '10',
        'anthropic-ratelimit-requests-remaining': '5',
        'anthropic-ratelimit-requests-reset': 'soon',
      }),
      CTX,
    );
    expect(result.readings.map((r) => [r.metric, r.used_percent, r.resets_at])).toEqual([['requests', 50, null]]);
  });
});

describe('anthropic-headers unified (subscription) headers', () => {
  it('reads utilization FRACTIONS as percent, above 1 kept, with epoch-second resets', () => {
    const result = parseAnthropicHeaders(
      headerText(200, {
        'anthropic-ratelimit-unified-5h-utilization': '0.29',
        'anthropic-ratelimit-unified-5h-reset': '1787234400',
        'anthropic-ratelimit-unified-7d-utilization': '1.05',
        'anthropic-ratelimit-unified-7d-reset': '1787648400',
        'anthropic-ratelimit-unified-status': 'allowed',
      }),
      CTX,
    );
    expect(result.readings.map((r) => [r.metric, r.used_percent, r.resets_at])).toEqual([
      ['five_hour', 29, 1787234400],
      ['seven_day', 105, 1787648400],
    ]);
    expect(result.warnings).toEqual([]);
    expectSchemaValid(result);
  });

  it('parses field by field: a bad 7d field is unknown while 5h still reads', () => {
    const result = parseAnthropicHeaders(
      headerText(200, {
        'anthropic-ratelimit-unified-5h-utilization': '0.5',
        'anthropic-ratelimit-unified-5h-reset': 'garbage',
        'anthropic-ratelimit-unified-7d-utilization': '41%',
      }),
      CTX,
    );
    expect(result.readings.map((r) => [r.metric, r.used_percent, r.resets_at])).toEqual([['five_hour', 50, null]]);
    expect(result.unknown).toContainEqual({ metric: 'seven_day', reason: 'anthropic-ratelimit-unified-7d-utilization is not a fraction: "41%"' });
  });

  it.each([
    ['allowed_warning', true],
    ['rejected', false],
  ])('unified status %s is a rate_limit warning; recovers: %s', (status, recovers) => {
    const result = parseAnthropicHeaders(
      headerText(200, {
        'anthropic-ratelimit-unified-status': status,
        'anthropic-ratelimit-unified-5h-utilization': '0.92',
      }),
      CTX,
    );
    expect(result.warnings.map((w) => [w.source, w.kind, w.text, w.recovers, w.retry_after_seconds])).toEqual([
      ['anthropic-headers', 'rate_limit', `Anthropic rate limit: anthropic-ratelimit-unified-status: ${status}`, recovers, null],
    ]);
    expectSchemaValid(result);
  });
});

describe('anthropic-headers 429', () => {
  it('a 429 with retry-after is a recovering warning carrying the seconds', () => {
    const result = parseAnthropicHeaders(headerText(429, { 'retry-after': '20', 'content-type': 'application/json' }), CTX);
    expect(result.warnings.map((w) => [w.kind, w.text, w.recovers, w.retry_after_seconds, w.observed_at])).toEqual([
      ['rate_limit', 'Anthropic rate limit: HTTP 429 Too Many Requests', true, 20, FIXTURE_ISO],
    ]);
  });

  it('a 429 without retry-after leaves recovery unsaid (a spend cap sends none)', () => {
    const result = parseAnthropicHeaders(headerText(429, { 'content-type': 'application/json' }), CTX);
    expect(result.warnings.map((w) => [w.kind, w.recovers, w.retry_after_seconds])).toEqual([['rate_limit', null, null]]);
  });

  it('reads retry-after given as an HTTP date relative to the observation time', () => {
    const result = parseAnthropicHeaders(headerText(429, { 'retry-after': 'Thu, 20 Aug 2026 10:01:00 GMT' }), CTX);
    expect(result.warnings[0]?.retry_after_seconds).toBe(60);
  });
});

describe('anthropic-headers input shape', () => {
  it('refuses empty text, non-header lines and JSON of the wrong shape', () => {
    expect(expectInvalidBody(() => parseAnthropicHeaders('   \n', CTX)).message).toBe('anthropic-headers: the header text is empty');
    const garbage = expectInvalidBody(() => parseAnthropicHeaders('HTTP/2 200\nthis is not a header\n', CTX));
    expect(garbage.message).toMatch(/line 2 is not a "name: value" header line/);
    expect(garbage.hint).toMatch(/curl -D -/);
    expect(expectInvalidBody(() => parseAnthropicHeaders('{"a": ', CTX)).message).toMatch(/the header object is not valid JSON/);
    expect(expectInvalidBody(() => parseAnthropicHeaders('{"a": {"b": 1}}', CTX)).message).toMatch(
      /header "a" must be a string, a number or an array of strings, got an object/,
    );
  });

  it('reads only the last response block of curl output and stops at the body', () => {
    const raw = [
      'HTTP/1.1 100 Continue',
      '',
      'HTTP/1.1 429 Too Many Requests',
      'retry-after: 7',
      'anthropic-ratelimit-requests-limit: 10',
      'anthropic-ratelimit-requests-remaining: 0',
      '',
      '{"type":"error","error":{"type":"rate_limit_error","message":"x: y"}}',
    ].join('\r\n');
    const result = parseAnthropicHeaders(raw, CTX);
    expect(metrics(result.readings)).toEqual(['requests']);
    expect(result.readings[0]?.used_percent).toBe(100);
    expect(result.warnings.map((w) => w.retry_after_seconds)).toEqual([7]);
  });
});
