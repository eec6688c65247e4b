import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { parseOpenaiHeaders } from '../../../adapters/telemetry/index.js';
import { parseGoDurationMs } from '../../../adapters/telemetry/time-formats.js';
import type { Reading } from '../../../schemas/telemetry.schema.js';
import { CTX, expectInvalidBody, expectSchemaValid, fixture, FIXTURE_ISO } from './fixture-helpers.js';

const FIXTURE = 'http/openai.200.headers.txt';
const NOW = 1787220000;

function withoutSha(readings: Reading[]): Omit<Reading, 'raw_sha256'>[] {
  return readings.map(({ raw_sha256: _sha, ...rest }) => rest);
}

function limits(headers: Record<string, string>, status = 200): string {
  return [`HTTP/1.1 ${status} OK`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)].join('\n');
}

describe('openai-headers fixture', () => {
  it(`${FIXTURE} → requests 1/5000 (resets in 12ms), tokens 24/160000 (resets in 6m0s)`, () => {
    const raw = fixture(FIXTURE);
    const common = {
      source: 'openai-headers',
      observed_at: FIXTURE_ISO,
      raw_sha256: createHash('sha256').update(raw).digest('hex'),
      executor: null,
    };
    const result = parseOpenaiHeaders(raw, CTX);
    expect(result.readings).toEqual([
      { ...common, metric: 'requests', used_percent: 0.02, resets_at: 1787220000.012 },
      { ...common, metric: 'tokens', used_percent: 0.015, resets_at: NOW + 360 },
    ]);
    expect(result.unknown).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(result.route).toEqual({ cwd: null, session_id: null });
    expectSchemaValid(result);
  });

  it('gives the same readings from a JSON object of name → value', () => {
    const text = parseOpenaiHeaders(fixture(FIXTURE), CTX);
    const json = parseOpenaiHeaders(
      JSON.stringify({
        'X-RateLimit-Limit-Requests': '5000',
        'x-ratelimit-limit-tokens': 160000,
        'x-ratelimit-remaining-requests': '4999',
        'x-ratelimit-remaining-tokens': '159976',
        'x-ratelimit-reset-requests': '12ms',
        'x-ratelimit-reset-tokens': '6m0s',
      }),
      CTX,
    );
    expect(withoutSha(json.readings)).toEqual(withoutSha(text.readings));
  });
});

describe('openai-headers limits', () => {
  it.each([
    ['-1', 'x-ratelimit-limit-requests is -1 (no usable limit reported)'],
    ['0', 'x-ratelimit-limit-requests is 0 (no usable limit reported)'],
  ])('a limit of %s is unknown, not a percentage', (limit, reason) => {
    const result = parseOpenaiHeaders(
      limits({
        'x-ratelimit-limit-requests': limit,
        'x-ratelimit-remaining-requests': '0',
        'x-ratelimit-limit-tokens': '100',
        'x-ratelimit-remaining-tokens': '75',
      }),
      CTX,
    );
    expect(result.readings.map((r) => [r.metric, r.used_percent])).toEqual([['tokens', 25]]);
    expect(result.unknown).toEqual([{ metric: 'requests', reason }]);
  });

  it('missing headers are unknown', () => {
    const result = parseOpenaiHeaders(limits({ 'content-type': 'application/json', 'x-ratelimit-limit-tokens': '100' }), CTX);
    expect(result.readings).toEqual([]);
    expect(result.unknown).toEqual([
      { metric: 'requests', reason: 'x-ratelimit-limit-requests is missing' },
      { metric: 'tokens', reason: 'x-ratelimit-remaining-tokens is missing' },
    ]);
  });

  it('a remaining above the limit is unknown rather than a negative use', () => {
    const result = parseOpenaiHeaders(limits({ 'x-ratelimit-limit-requests': '10', 'x-ratelimit-remaining-requests': '11' }), CTX);
    expect(result.unknown[0]).toEqual({ metric: 'requests', reason: 'x-ratelimit-remaining-requests 11 exceeds x-ratelimit-limit-requests 10' });
  });
});

describe('openai-headers reset durations', () => {
  it.each([
    ['1s', NOW + 1],
    ['6m0s', NOW + 360],
    ['12ms', 1787220000.012],
    ['1h2m3.5s', NOW + 3723.5],
    ['0s', NOW],
  ])('resets %s after the observation → %d', (duration, resetsAt) => {
    const result = parseOpenaiHeaders(
      limits({
        'x-ratelimit-limit-requests': '10',
        'x-ratelimit-remaining-requests': '9',
        'x-ratelimit-reset-requests': duration,
      }),
      CTX,
    );
    expect(result.readings[0]?.resets_at).toBe(resetsAt);
  });

  it('an unreadable duration keeps the reading with a null reset', () => {
    const result = parseOpenaiHeaders(
      limits({
        'x-ratelimit-limit-requests': '10',
        'x-ratelimit-remaining-requests': '9',
        'x-ratelimit-reset-requests': '20',
      }),
      CTX,
    );
    expect(result.readings.map((r) => [r.used_percent, r.resets_at])).toEqual([[10, null]]);
  });

  it('parses Go durations and refuses anything else', () => {
    expect(parseGoDurationMs('1h2m3.5s')).toBe(3_723_500);
    expect(parseGoDurationMs('12ms')).toBe(12);
    expect(parseGoDurationMs('1m30s')).toBe(90_000);
    expect(parseGoDurationMs('250us')).toBe(0.25);
    for (const bad of ['', '20', '1x', 's', '1h 2m', '-1s']) expect(parseGoDurationMs(bad)).toBeNull();
  });
});

describe('openai-headers 429', () => {
  it('a 429 is a rate_limit warning; retry-after makes it recovering', () => {
    const withRetry = parseOpenaiHeaders(limits({ 'retry-after': '3' }, 429), CTX);
    expect(withRetry.warnings.map((w) => [w.source, w.kind, w.recovers, w.retry_after_seconds])).toEqual([['openai-headers', 'rate_limit', true, 3]]);
    const bare = parseOpenaiHeaders(limits({}, 429), CTX);
    expect(bare.warnings.map((w) => [w.kind, w.recovers, w.retry_after_seconds])).toEqual([['rate_limit', null, null]]);
    expectSchemaValid(withRetry);
  });

  it('reads the status from a JSON ":status" key', () => {
    const result = parseOpenaiHeaders(JSON.stringify({ ':status': '429', 'retry-after': '1' }), CTX);
    expect(result.warnings).toHaveLength(1);
  });

  it('a 200 gives no warning', () => {
    expect(parseOpenaiHeaders(fixture(FIXTURE), CTX).warnings).toEqual([]);
  });

  it('refuses a JSON array', () => {
    expect(expectInvalidBody(() => parseOpenaiHeaders('[]', CTX)).message).toMatch(/got an array/);
  });
});
