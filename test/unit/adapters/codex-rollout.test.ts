import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { parseCodexRollout, ZERO_PLACEHOLDER_REASON } from '../../../adapters/telemetry/index.js';
import { CTX, expectInvalidBody, expectSchemaValid, fixture, FIXTURE_ISO, metrics } from './fixture-helpers.js';

const ROLLOUT = 'codex/rollout-2026-08-20T09-00-00-019d0a8b-f6b9-7f61-b6c9-2050a0dbfbcd.jsonl';
const SESSION = '019d0a8b-f6b9-7f61-b6c9-2050a0dbfbcd';
const CONTEXT_REASON =
  'Codex reports token counts (info.last_token_usage) and info.model_context_window, ' +
  'not a percentage; a context percent would be derived from token counts';

interface Window {
  used_percent: number | null;
  window_minutes?: number;
  resets_at?: number;
  resets_in_seconds?: number;
}

function tokenCount(timestamp: string | null, rateLimits: unknown, info: unknown = null): string {
  const line: Record<string, unknown> = { type: 'event_msg', payload: { type: 'token_count', info, rate_limits: rateLimits } };
  if (timestamp !== null) line['timestamp'] = timestamp;
  return JSON.stringify(line);
}

function windows(primary: Window | null, secondary: Window | null): unknown {
  return { primary, secondary, plan_type: 'plus' };
}

function jsonl(...lines: string[]): string {
  return `${lines.join('\n')}\n`;
}

describe('codex-rollout fixtures', () => {
  it(`${ROLLOUT} → the last 5 h and weekly readings at their line's time, context unknown`, () => {
    const raw = fixture(ROLLOUT);
    const sha = createHash('sha256').update(raw).digest('hex');
    const result = parseCodexRollout(raw, CTX);
    const common = { source: 'codex-rollout', observed_at: '2026-08-20T09:03:42.196Z', raw_sha256: sha, executor: SESSION };
    expect(result.readings).toEqual([
      { ...common, metric: 'five_hour', used_percent: 15, resets_at: 1787234400 },
      { ...common, metric: 'weekly', used_percent: 44, resets_at: 1787648400 },
    ]);
    expect(result.unknown).toEqual([{ metric: 'context', reason: CONTEXT_REASON }]);
    expect(result.events).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(result.route).toEqual({ cwd: '/home/dev/acme-api', session_id: SESSION });
    expectSchemaValid(result);
  });

  it('codex/rollout-weekly-only.jsonl → weekly 12.4 % from primary, no 5 h reading (unknown)', () => {
    const raw = fixture('codex/rollout-weekly-only.jsonl');
    const result = parseCodexRollout(raw, CTX);
    expect(result.readings).toEqual([
      {
        source: 'codex-rollout',
        metric: 'weekly',
        used_percent: 12.4,
        resets_at: 1787824800,
        observed_at: '2026-08-13T12:54:37.952Z',
        raw_sha256: createHash('sha256').update(raw).digest('hex'),
        executor: null,
      },
    ]);
    expect(result.unknown).toEqual([
      { metric: 'context', reason: 'token_count info is absent' },
      { metric: 'five_hour', reason: 'no 300-minute (5 h) window in token_count rate_limits (primary: 10080 min, secondary: null)' },
    ]);
    expect(result.route).toEqual({ cwd: null, session_id: null });
    expectSchemaValid(result);
  });

  it('codex/hook.PreCompact.json → a PreCompact event, no numbers', () => {
    const raw = fixture('codex/hook.PreCompact.json');
    const result = parseCodexRollout(raw, CTX);
    expect(result.events).toEqual([
      {
        source: 'codex-rollout',
        name: 'PreCompact',
        detail: { trigger: 'auto' },
        observed_at: FIXTURE_ISO,
        raw_sha256: createHash('sha256').update(raw).digest('hex'),
        executor: SESSION,
      },
    ]);
    expect(result.readings).toEqual([]);
    expect(result.unknown).toEqual([]);
    expect(result.route).toEqual({ cwd: '/home/dev/acme-api', session_id: SESSION });
  });

  it('codex/hook.Stop.json → a Stop event, no numbers', () => {
    const result = parseCodexRollout(fixture('codex/hook.Stop.json'), CTX);
    expect(result.events.map((e) => [e.name, e.detail, e.executor])).toEqual([['Stop', {}, SESSION]]);
    expect(result.readings).toEqual([]);
    expect(result.unknown).toEqual([]);
  });

  it('codex/notify.agent-turn-complete.json → an agent-turn-complete event routed by thread-id', () => {
    const result = parseCodexRollout(fixture('codex/notify.agent-turn-complete.json'), CTX);
    expect(result.events.map((e) => [e.name, e.detail, e.executor, e.observed_at])).toEqual([
      ['agent-turn-complete', { 'turn-id': '019d0ac4-6465-7972-9167-93ab7e65c2ee' }, SESSION, FIXTURE_ISO],
    ]);
    expect(result.readings).toEqual([]);
    expect(result.route).toEqual({ cwd: '/home/dev/acme-api', session_id: SESSION });
  });
});

describe('codex-rollout window classification', () => {
  it('classifies by window_minutes, never by position: weekly in primary, 5 h in secondary', () => {
    const raw = jsonl(
      tokenCount(
        '2026-08-20T09:00:00Z',
        windows({ used_percent: 70, window_minutes: 10080, resets_at: 1787648400 }, { used_percent: 5, window_minutes: 300, resets_at: 1787234400 }),
      ),
    );
    const result = parseCodexRollout(raw, CTX);
    expect(result.readings.map((r) => [r.metric, r.used_percent, r.resets_at])).toEqual([
      ['five_hour', 5, 1787234400],
      ['weekly', 70, 1787648400],
    ]);
  });

  it('maps 299/10079 and 43200/43800 windows', () => {
    const fiveAndMonth = parseCodexRollout(
      jsonl(tokenCount(null, windows({ used_percent: 1, window_minutes: 299 }, { used_percent: 2, window_minutes: 43200 }))),
      CTX,
    );
    expect(fiveAndMonth.readings.map((r) => [r.metric, r.used_percent])).toEqual([
      ['five_hour', 1],
      ['monthly', 2],
    ]);
    const weekAndMonth = parseCodexRollout(
      jsonl(tokenCount(null, windows({ used_percent: 3, window_minutes: 10079 }, { used_percent: 4, window_minutes: 43800 }))),
      CTX,
    );
    expect(weekAndMonth.readings.map((r) => [r.metric, r.used_percent])).toEqual([
      ['weekly', 3],
      ['monthly', 4],
    ]);
  });

  it('skips an unknown window length and says so in unknown', () => {
    const result = parseCodexRollout(
      jsonl(
        tokenCount(
          null,
          windows({ used_percent: 50, window_minutes: 60, resets_at: 1787234400 }, { used_percent: 10, window_minutes: 10080, resets_at: 1787648400 }),
        ),
      ),
      CTX,
    );
    expect(result.readings.map((r) => [r.metric, r.used_percent])).toEqual([['weekly', 10]]);
    expect(result.unknown.find((u) => u.metric === 'five_hour')?.reason).toBe(
      'no 300-minute (5 h) window in token_count rate_limits (primary: 60 min, secondary: 10080 min); ' +
        'primary window_minutes 60 matches no known window, skipped',
    );
  });

  it('computes resets_in_seconds from the line timestamp, not from the clock', () => {
    const result = parseCodexRollout(
      jsonl(
        tokenCount(
          '2026-08-20T09:00:00.500Z',
          windows({ used_percent: 20, window_minutes: 299, resets_in_seconds: 3600 }, { used_percent: 40, window_minutes: 10079, resets_in_seconds: 86400 }),
        ),
      ),
      CTX,
    );
    expect(result.readings.map((r) => [r.metric, r.resets_at, r.observed_at])).toEqual([
      ['five_hour', 1787220000.5, '2026-08-20T09:00:00.500Z'],
      ['weekly', 1787302800.5, '2026-08-20T09:00:00.500Z'],
    ]);
  });

  it('reads the older flat keys, still classified by window length', () => {
    const result = parseCodexRollout(
      jsonl(
        tokenCount('2026-08-20T09:00:00Z', {
          primary_used_percent: 30,
          secondary_used_percent: 60,
          primary_to_secondary_ratio_percent: 50,
          primary_window_minutes: 10080,
          secondary_window_minutes: 300,
          primary_resets_in_seconds: 100,
          secondary_resets_in_seconds: 200,
        }),
      ),
      CTX,
    );
    expect(result.readings.map((r) => [r.metric, r.used_percent, r.resets_at])).toEqual([
      ['five_hour', 60, 1787216600],
      ['weekly', 30, 1787216500],
    ]);
  });

  it('flat keys without window minutes are skipped, not guessed from the slot', () => {
    const result = parseCodexRollout(jsonl(tokenCount(null, { primary_used_percent: 30, secondary_used_percent: 60 })), CTX);
    expect(result.readings).toEqual([]);
    expect(result.unknown.find((u) => u.metric === 'five_hour')?.reason).toMatch(/primary window_minutes absent matches no known window/);
  });

  it('uses ctx.observedAt when a line has no timestamp', () => {
    const result = parseCodexRollout(jsonl(tokenCount(null, windows({ used_percent: 9, window_minutes: 300 }, null))), CTX);
    expect(result.readings[0]?.observed_at).toBe(FIXTURE_ISO);
  });

  it('lists rate_limits null and used_percent null as unknown, never 0', () => {
    const nullLimits = parseCodexRollout(jsonl(tokenCount(null, null)), CTX);
    expect(nullLimits.readings).toEqual([]);
    expect(nullLimits.unknown).toEqual([
      { metric: 'context', reason: 'token_count info is null' },
      { metric: 'five_hour', reason: 'token_count rate_limits is null' },
      { metric: 'weekly', reason: 'token_count rate_limits is null' },
    ]);
    const nullPercent = parseCodexRollout(
      jsonl(tokenCount(null, windows({ used_percent: null, window_minutes: 300 }, { used_percent: 8, window_minutes: 10080 }))),
      CTX,
    );
    expect(metrics(nullPercent.readings)).toEqual(['weekly']);
    expect(nullPercent.unknown).toContainEqual({ metric: 'five_hour', reason: 'token_count primary.used_percent is null' });
  });

  it('keeps an earlier number when a later line of the same payload has rate_limits null', () => {
    const result = parseCodexRollout(
      jsonl(
        tokenCount('2026-08-20T09:00:00Z', windows({ used_percent: 33, window_minutes: 300 }, { used_percent: 2, window_minutes: 10080 })),
        tokenCount('2026-08-20T09:01:00Z', null),
      ),
      CTX,
    );
    expect(result.readings.map((r) => [r.metric, r.used_percent])).toEqual([
      ['five_hour', 33],
      ['weekly', 2],
    ]);
    expect(metrics(result.unknown)).toEqual(['context']);
  });
});

describe('codex-rollout context', () => {
  it('never emits a context percent from last_token_usage / model_context_window', () => {
    const info = {
      total_token_usage: { input_tokens: 200000, total_tokens: 200000 },
      last_token_usage: { input_tokens: 200000, cached_input_tokens: 0, output_tokens: 1000, total_tokens: 201000 },
      model_context_window: 258400,
    };
    const result = parseCodexRollout(jsonl(tokenCount(null, null, info)), CTX);
    expect(metrics(result.readings)).not.toContain('context');
    expect(result.unknown).toContainEqual({ metric: 'context', reason: CONTEXT_REASON });
  });

  it('says which half is missing when only one of the two is present', () => {
    const result = parseCodexRollout(jsonl(tokenCount(null, null, { last_token_usage: { total_tokens: 5 }, model_context_window: null })), CTX);
    expect(result.unknown).toContainEqual({ metric: 'context', reason: 'token_count info.model_context_window is null' });
  });
});

describe('codex-rollout JSONL framing', () => {
  it('ignores a partial last line without newline and reads the rest', () => {
    const raw = fixture(ROLLOUT);
    const partial = `${raw.endsWith('\n') ? raw : `${raw}\n`}{"timestamp":"2026-08-20T09:05:00.000Z","type":"event_msg","payload":{"type":"tok`;
    const result = parseCodexRollout(partial, CTX);
    expect(result.readings.map((r) => [r.metric, r.used_percent])).toEqual([
      ['five_hour', 15],
      ['weekly', 44],
    ]);
  });

  it('returns nothing for a chunk that is only a partial line', () => {
    expect(parseCodexRollout('{"timestamp":"2026-08-20T09:05:00.000Z","ty', CTX).readings).toEqual([]);
  });

  it('skips a malformed middle line, naming its number, and reads every other line', () => {
    const lines = fixture(ROLLOUT).trimEnd().split('\n');
    lines.splice(2, 0, '{"type": "event_msg", oops');
    const result = parseCodexRollout(`${lines.join('\n')}\n`, CTX);
    expect(result.skipped).toEqual([{ line: 3, reason: expect.stringMatching(/^the line is not valid JSON/) as string }]);
    expect(result.readings.map((r) => [r.metric, r.used_percent])).toEqual([
      ['five_hour', 15],
      ['weekly', 44],
    ]);
    expect(result.route.cwd).not.toBeNull();
  });

  it('skips a malformed last line that is terminated by a newline', () => {
    const result = parseCodexRollout(jsonl(tokenCount(null, windows({ used_percent: 9, window_minutes: 300 }, null)), '{broken'), CTX);
    expect(result.skipped.map((s) => s.line)).toEqual([2]);
    expect(metrics(result.readings)).toEqual(['five_hour']);
  });

  it('accepts CRLF line ends', () => {
    const raw = `${tokenCount(null, windows({ used_percent: 9, window_minutes: 300 }, null))}\r\n`;
    expect(metrics(parseCodexRollout(raw, CTX).readings)).toEqual(['five_hour']);
  });

  it('refuses a payload where no line is a JSON object', () => {
    expect(expectInvalidBody(() => parseCodexRollout(jsonl('[1,2]'), CTX)).message).toMatch(/no line could be read \(line 1: not a JSON object \(an array\)\)/);
  });

  it('reads plain numeric strings as numbers; any other wrong type makes that window unknown and keeps the others', () => {
    const quoted = parseCodexRollout(jsonl(tokenCount(null, windows({ used_percent: '9.5' as unknown as number, window_minutes: 300 }, null))), CTX);
    expect(quoted.readings.map((r) => [r.metric, r.used_percent])).toEqual([['five_hour', 9.5]]);
    const mixed = parseCodexRollout(
      jsonl(tokenCount(null, windows({ used_percent: 'lots' as unknown as number, window_minutes: 300 }, { used_percent: 61, window_minutes: 10080 }))),
      CTX,
    );
    expect(mixed.readings.map((r) => [r.metric, r.used_percent])).toEqual([['weekly', 61]]);
    expect(mixed.unknown).toContainEqual({ metric: 'five_hour', reason: 'line 1: payload.rate_limits.primary.used_percent is not a number ("lots")' });
    expect(mixed.skipped).toEqual([]);
  });

  it('skips a line with an unreadable timestamp, naming it', () => {
    const result = parseCodexRollout(jsonl(tokenCount('yesterday', null), tokenCount(null, windows({ used_percent: 9, window_minutes: 300 }, null))), CTX);
    expect(result.skipped).toEqual([{ line: 1, reason: 'timestamp is not an ISO 8601 time: "yesterday"' }]);
    expect(metrics(result.readings)).toEqual(['five_hour']);
  });
});

describe('codex-rollout zero placeholder', () => {
  const real = windows({ used_percent: 15, window_minutes: 300, resets_at: 1787234400 }, { used_percent: 44, window_minutes: 10080, resets_at: 1787648400 });
  const zeros = windows({ used_percent: 0, window_minutes: 300, resets_at: 1787238000 }, { used_percent: 0, window_minutes: 10080, resets_at: 1787652000 });

  it('does not emit an all-zero reading that follows a real one before its reset', () => {
    const result = parseCodexRollout(jsonl(tokenCount('2026-08-20T09:00:00Z', real), tokenCount('2026-08-20T09:10:00Z', zeros)), CTX);
    expect(result.readings.map((r) => [r.metric, r.used_percent, r.resets_at, r.observed_at])).toEqual([
      ['five_hour', 15, 1787234400, '2026-08-20T09:00:00.000Z'],
      ['weekly', 44, 1787648400, '2026-08-20T09:00:00.000Z'],
    ]);
    expect(result.unknown.filter((u) => u.metric !== 'context')).toEqual([
      { metric: 'five_hour', reason: ZERO_PLACEHOLDER_REASON },
      { metric: 'weekly', reason: ZERO_PLACEHOLDER_REASON },
    ]);
  });

  it('emits a zero after the earlier window has reset', () => {
    const result = parseCodexRollout(jsonl(tokenCount('2026-08-20T09:00:00Z', real), tokenCount('2026-08-20T14:00:01Z', zeros)), CTX);
    expect(result.readings.map((r) => [r.metric, r.used_percent])).toEqual([
      ['five_hour', 0],
      ['weekly', 44],
    ]);
    expect(result.unknown).toContainEqual({ metric: 'weekly', reason: ZERO_PLACEHOLDER_REASON });
  });

  it('emits a zero that is the first reading of its window', () => {
    const result = parseCodexRollout(jsonl(tokenCount('2026-08-20T09:10:00Z', zeros)), CTX);
    expect(result.readings.map((r) => [r.metric, r.used_percent])).toEqual([
      ['five_hour', 0],
      ['weekly', 0],
    ]);
  });
});

describe('codex-rollout errors (codex_error_info)', () => {
  const line = (timestamp: string, payload: Record<string, unknown>) => JSON.stringify({ timestamp, type: 'event_msg', payload });
  const recent = new Date(Date.parse(FIXTURE_ISO) - 60_000).toISOString();

  it('an EventMsg::Error and the task_complete of the same turn make one warning; other errors are events only', () => {
    const result = parseCodexRollout(
      jsonl(
        line(recent, {
          type: 'error',
          message: 'stream disconnected',
          codex_error_info: { response_stream_disconnected: { http_status_code: 502 } },
          turn_id: 't-0',
        }),
        line(recent, { type: 'error', message: 'You’ve hit your usage limit.', codex_error_info: 'usage_limit_exceeded', turn_id: 't-1' }),
        line(recent, { type: 'task_complete', turn_id: 't-1', error: { message: 'You’ve hit your usage limit.', codex_error_info: 'usage_limit_exceeded' } }),
      ),
      CTX,
    );
    expect(result.warnings.map((w) => [w.kind, w.recovers, w.retry_after_seconds, w.observed_at])).toEqual([['rate_limit', false, null, recent]]);
    expect(result.events.map((e) => e.detail['codex_error_info'])).toEqual(['response_stream_disconnected', 'usage_limit_exceeded', 'usage_limit_exceeded']);
    expectSchemaValid(result);
  });

  it('a usage limit from an old line is history: an event, no warning; a task_complete without error says nothing', () => {
    const old = new Date(Date.parse(FIXTURE_ISO) - 3_600_000).toISOString();
    const result = parseCodexRollout(
      jsonl(
        line(old, { type: 'task_complete', turn_id: 't-1', error: { message: 'limit', codex_error_info: 'usage_limit_exceeded' } }),
        line(recent, { type: 'task_complete', turn_id: 't-2', last_agent_message: 'done' }),
      ),
      CTX,
    );
    expect(result.warnings).toEqual([]);
    expect(result.events.map((e) => e.name)).toEqual(['codex_error']);
  });
});
