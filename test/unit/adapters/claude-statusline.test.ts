import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { parseClaudeStatusline } from '../../../adapters/telemetry/index.js';
import { CTX, expectInvalidBody, expectSchemaValid, fixture, FIXTURE_ISO, metrics } from './fixture-helpers.js';

const SESSION = '3f0c9a52-7d1e-4b6a-9c2e-5a1b8f0d4e21';

function payload(extra: Record<string, unknown>): string {
  return JSON.stringify({ session_id: 'sess-1', cwd: '/repo', ...extra });
}

describe('claude-statusline', () => {
  it('reads context, five_hour and seven_day from the subscriber fixture exactly', () => {
    const raw = fixture('claude-statusline/subscriber-v2.1.2xx.json');
    const sha = createHash('sha256').update(raw).digest('hex');
    const result = parseClaudeStatusline(raw, CTX);
    const common = { source: 'claude-statusline', observed_at: FIXTURE_ISO, raw_sha256: sha, executor: SESSION };
    expect(result.readings).toEqual([
      { ...common, metric: 'context', used_percent: 59, resets_at: null },
      { ...common, metric: 'five_hour', used_percent: 23.5, resets_at: 1787234400 },
      { ...common, metric: 'seven_day', used_percent: 41.2, resets_at: 1787648400 },
    ]);
    expect(result.unknown).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(result.events).toEqual([]);
    expect(result.route).toEqual({ cwd: '/home/dev/acme-api', session_id: SESSION });
    expectSchemaValid(result);
  });

  it('gives the api-key first render no reading: context null and absent windows are unknown, not 0', () => {
    const result = parseClaudeStatusline(fixture('claude-statusline/apikey-first-render.json'), CTX);
    expect(result.readings).toEqual([]);
    expect(metrics(result.unknown)).toEqual(['context', 'five_hour', 'seven_day']);
    expect(result.unknown[0]?.reason).toMatch(/used_percentage is null/);
    expect(result.unknown[1]?.reason).toMatch(/rate_limits is absent/);
    expect(result.route).toEqual({ cwd: '/home/dev/acme-api', session_id: '9b2d7e10-44c1-4f0e-8a3d-2e6f1c7b5a90' });
  });

  it('keeps values above 100 as reported, never clamped', () => {
    const result = parseClaudeStatusline(
      payload({
        context_window: { used_percentage: 101 },
        rate_limits: { five_hour: { used_percentage: 105, resets_at: 1787234400 }, seven_day: { used_percentage: 100.5 } },
      }),
      CTX,
    );
    expect(result.readings.map((r) => [r.metric, r.used_percent, r.resets_at])).toEqual([
      ['context', 101, null],
      ['five_hour', 105, 1787234400],
      ['seven_day', 100.5, null],
    ]);
    expectSchemaValid(result);
  });

  it('lists a null window percentage as unknown while the other window still reads', () => {
    const result = parseClaudeStatusline(
      payload({
        context_window: { used_percentage: 12 },
        rate_limits: { five_hour: { used_percentage: null, resets_at: 1787234400 }, seven_day: { used_percentage: 0, resets_at: 1787648400 } },
      }),
      CTX,
    );
    expect(metrics(result.readings)).toEqual(['context', 'seven_day']);
    expect(result.readings[1]?.used_percent).toBe(0);
    expect(result.unknown).toEqual([{ metric: 'five_hour', reason: 'rate_limits.five_hour.used_percentage is null' }]);
  });

  it('lists a single absent window as unknown', () => {
    const result = parseClaudeStatusline(
      payload({
        context_window: { used_percentage: 12 },
        rate_limits: { seven_day: { used_percentage: 3, resets_at: 1787648400 } },
      }),
      CTX,
    );
    expect(result.unknown).toEqual([{ metric: 'five_hour', reason: 'rate_limits.five_hour is absent' }]);
  });

  it('treats a 1.0.x "Status" payload without context_window as all unknown', () => {
    const raw = JSON.stringify({ hook_event_name: 'Status', session_id: 'old', cwd: '/repo', model: { id: 'claude-3' } });
    const result = parseClaudeStatusline(raw, CTX);
    expect(result.readings).toEqual([]);
    expect(metrics(result.unknown)).toEqual(['context', 'five_hour', 'seven_day']);
    expect(result.unknown[0]?.reason).toMatch(/context_window is absent/);
  });

  it('never derives context from token counts when used_percentage is null', () => {
    const result = parseClaudeStatusline(
      payload({
        context_window: {
          total_input_tokens: 150000,
          context_window_size: 200000,
          used_percentage: null,
          current_usage: { input_tokens: 150000, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        },
      }),
      CTX,
    );
    expect(result.readings).toEqual([]);
    expect(metrics(result.unknown)).toContain('context');
  });

  it('routes by workspace.current_dir when cwd is absent', () => {
    const raw = JSON.stringify({ session_id: 's', workspace: { current_dir: '/ws' }, context_window: { used_percentage: 1 } });
    expect(parseClaudeStatusline(raw, CTX).route).toEqual({ cwd: '/ws', session_id: 's' });
  });

  it('refuses only text that is not JSON or not an object', () => {
    expect(expectInvalidBody(() => parseClaudeStatusline('not json', CTX)).message).toMatch(/not valid JSON/);
    expect(expectInvalidBody(() => parseClaudeStatusline('[1]', CTX)).hint).toMatch(/statusLine/);
    expect(expectInvalidBody(() => parseClaudeStatusline('[1]', CTX)).message).toMatch(/one JSON object, got an array/);
  });

  it("one mistyped field makes its metric unknown; the other readings count (the issue's payload)", () => {
    const raw = JSON.stringify({
      context_window: { used_percentage: '9x' },
      rate_limits: { five_hour: { used_percentage: 91, resets_at: 1787234400 } },
      cwd: '/repo',
    });
    const result = parseClaudeStatusline(raw, CTX);
    expect(result.readings.map((r) => [r.metric, r.used_percent])).toEqual([['five_hour', 91]]);
    expect(result.unknown).toContainEqual({ metric: 'context', reason: 'context_window.used_percentage is not a number ("9x")' });
    expectSchemaValid(result);
  });

  it('reads plain numeric strings ("9", "9.3") as numbers', () => {
    const raw = JSON.stringify({ context_window: { used_percentage: '9' }, rate_limits: { five_hour: { used_percentage: '9.3', resets_at: '1787234400' } } });
    expect(parseClaudeStatusline(raw, CTX).readings.map((r) => [r.metric, r.used_percent, r.resets_at])).toEqual([
      ['context', 9, null],
      ['five_hour', 9.3, 1787234400],
    ]);
  });

  it('an out-of-range or unreadable reset makes that window unknown, not the payload', () => {
    const result = parseClaudeStatusline(
      payload({
        rate_limits: { five_hour: { used_percentage: 1, resets_at: 1787234400000 }, seven_day: { used_percentage: 40, resets_at: 1787648400 } },
        context_window: { used_percentage: -1 },
      }),
      CTX,
    );
    expect(result.readings.map((r) => r.metric)).toEqual(['seven_day']);
    expect(result.unknown.map((u) => u.metric)).toEqual(['context', 'five_hour']);
    expect(result.unknown[1]?.reason).toMatch(/rate_limits\.five_hour\.resets_at lies outside/);
  });

  it('a spend limit is a reading only with its reported percentage: used_usd / limit_usd are never divided', () => {
    const spend = (limit: Record<string, unknown>) =>
      parseClaudeStatusline(payload({ rate_limits: { five_hour: { used_percentage: 10, resets_at: 1787234400 }, spend_limit: limit } }), CTX);
    const reported = spend({ used_percentage: 95, resets_at: 1788220800, used_usd: 100, limit_usd: 500, period: 'monthly' });
    expect(reported.readings.filter((r) => r.metric === 'spend').map((r) => [r.used_percent, r.resets_at])).toEqual([[95, 1788220800]]);
    const unreported = spend({ used_percentage: null, resets_at: 1788220800, used_usd: 480, limit_usd: 500 });
    expect(unreported.readings.map((r) => r.metric)).toEqual(['five_hour']);
    expect(unreported.unknown).toContainEqual({ metric: 'spend', reason: 'rate_limits.spend_limit.used_percentage is null' });
    // No spend limit on the account: nothing is said about spend at all.
    expect(spend(null as unknown as Record<string, unknown>).unknown.map((u) => u.metric)).toEqual(['context', 'seven_day']);
    expectSchemaValid(reported);
  });

  it('a mistyped session_id or cwd routes nothing rather than refusing the numbers', () => {
    const result = parseClaudeStatusline(JSON.stringify({ session_id: 7, cwd: ['x'], rate_limits: { five_hour: { used_percentage: 50 } } }), CTX);
    expect(result.route).toEqual({ cwd: null, session_id: null });
    expect(metrics(result.readings)).toEqual(['five_hour']);
  });
});
