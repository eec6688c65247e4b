import { readdirSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ADAPTERS, type AdapterResult } from '../../../adapters/telemetry/index.js';
import { LEGACY_FORMAT_REASON } from '../../../adapters/telemetry/codex-rollout.js';
import type { Source } from '../../../schemas/telemetry.schema.js';
import { CTX, expectSchemaValid } from './fixture-helpers.js';

/** The corpus of this repository (real field sets, synthetic values), with a provenance line per file. */
const CORPUS = new URL('../../fixtures/telemetry/', import.meta.url);
const corpus = (path: string) => readFileSync(new URL(path, CORPUS), 'utf8');

const readingsOf = (r: AdapterResult) => r.readings.map((x) => [x.metric, x.limit?.id ?? null, x.used_percent]);
const warningsOf = (r: AdapterResult) => r.warnings.map((w) => [w.kind, w.recovers, w.retry_after_seconds]);

/** Every corpus file, its adapter, and what must come out of it. */
const CASES: readonly { file: string; adapter: Source; check: (result: AdapterResult) => void }[] = [
  {
    file: 'codex/rollout-limit-families.jsonl',
    adapter: 'codex-rollout',
    check: (r) => {
      expect(readingsOf(r)).toEqual([
        ['five_hour', null, 31],
        ['five_hour', 'codex_bengalfox', 1],
        ['weekly', null, 84],
        ['weekly', 'codex_bengalfox', 3],
      ]);
      expect(r.readings.find((x) => x.limit !== undefined)?.limit).toEqual({ id: 'codex_bengalfox', name: 'GPT-5.3-Codex-Spark' });
      expect(r.route).toEqual({ cwd: '/home/dev/acme-api', session_id: '019d0a8c-5e7a-7c10-9f4e-3b2d1c0a9e87' });
    },
  },
  {
    file: 'codex/rollout-legacy-2025-07.jsonl',
    adapter: 'codex-rollout',
    check: (r) => {
      expect(r.readings).toEqual([]);
      expect(r.skipped).toEqual([]);
      expect(r.unknown).toEqual([
        { metric: 'five_hour', reason: LEGACY_FORMAT_REASON },
        { metric: 'weekly', reason: LEGACY_FORMAT_REASON },
      ]);
      expect(LEGACY_FORMAT_REASON).toMatch(/^an older Codex format with no usage data/);
    },
  },
  {
    file: 'codex/rollout-0.169-exec-usage-limit.jsonl',
    adapter: 'codex-rollout',
    check: (r) => {
      // No rate-limit numbers at all: the usage limit is said only by task_complete's codex_error_info.
      expect(r.readings).toEqual([]);
      expect(warningsOf(r)).toEqual([['rate_limit', false, null]]);
      expect(r.warnings[0]).toMatchObject({ observed_at: '2026-08-20T09:59:51.006Z', executor: '019d0a8c-5e7a-7c10-9f4e-3b2d1c0a9e87' });
      expect(r.warnings[0]?.text).toMatch(/^Codex usage limit \(usage_limit_exceeded\): You’ve hit your usage limit\./);
      expect(r.unknown.map((u) => u.metric)).toEqual(['context', 'five_hour', 'weekly']);
      expect(r.events.map((e) => [e.name, e.detail['codex_error_info']])).toEqual([['codex_error', 'usage_limit_exceeded']]);
      expect(r.route.cwd).toBe('/home/dev/acme-api');
    },
  },
  {
    file: 'claude-statusline/mistyped-fields.json',
    adapter: 'claude-statusline',
    check: (r) => {
      expect(readingsOf(r)).toEqual([
        ['context', null, 9],
        ['five_hour', null, 91],
      ]);
      expect(r.unknown).toEqual([{ metric: 'seven_day', reason: 'rate_limits.seven_day.used_percentage is not a number ("n/a")' }]);
    },
  },
  {
    file: 'claude-statusline/gateway-spend-limit.json',
    adapter: 'claude-statusline',
    check: (r) => {
      expect(readingsOf(r)).toEqual([
        ['context', null, 59],
        ['five_hour', null, 12],
        ['seven_day', null, 8],
        ['spend', null, 92],
      ]);
      expect(r.readings.find((x) => x.metric === 'spend')?.resets_at).toBe(1788220800);
      expect(r.unknown).toEqual([]);
    },
  },
  {
    file: 'claude-statusline/v1.0-status.json',
    adapter: 'claude-statusline',
    check: (r) => {
      expect(r.readings).toEqual([]);
      expect(r.unknown.map((u) => u.metric)).toEqual(['context', 'five_hour', 'seven_day']);
    },
  },
  {
    file: 'http/openai.429.quota.headers-and-body.txt',
    adapter: 'openai-headers',
    check: (r) => {
      expect(readingsOf(r)).toEqual([['requests', null, 0.2]]);
      expect(warningsOf(r)).toEqual([['insufficient_quota', false, null]]);
    },
  },
  {
    file: 'claude-transcript/2.1.328-p-usage-limit.json',
    adapter: 'claude-hook',
    check: (r) => {
      expect(warningsOf(r)).toEqual([['rate_limit', true, null]]);
      expect(r.warnings[0]?.text).toBe(
        'Claude Code stopped on a rate limit (HTTP 429): usage_limit_reached, five_hour window, resets at 2026-08-20T14:00:00.000Z',
      );
      expect(r.events.map((e) => [e.name, e.detail])).toEqual([
        ['api_error', { error: 'rate_limit', api_error: 'usage_limit_reached', status: '429', rate_limit_type: 'five_hour' }],
      ]);
      expect(r.route).toEqual({ cwd: '/home/dev/acme-api', session_id: '9d2f4b61-3c8a-4e7d-a15f-6b0e2c9d8a73' });
      expect(r.readings).toEqual([]);
    },
  },
  {
    file: 'http/anthropic.429.spend-cap.headers-and-body.txt',
    adapter: 'anthropic-headers',
    check: (r) => expect(warningsOf(r)).toEqual([['spend_cap', false, null]]),
  },
  {
    file: 'http/anthropic.429.rate.headers-and-body.txt',
    adapter: 'anthropic-headers',
    check: (r) => {
      expect(readingsOf(r)).toEqual([['tokens', null, 100]]);
      expect(warningsOf(r)).toEqual([['rate_limit', true, 17]]);
    },
  },
  {
    file: 'http/anthropic.unified-rejected.headers.txt',
    adapter: 'anthropic-headers',
    check: (r) => {
      expect(readingsOf(r)).toEqual([
        ['five_hour', null, 102],
        ['seven_day', null, 47],
      ]);
      expect(warningsOf(r)).toEqual([['rate_limit', false, null]]);
    },
  },
  {
    file: 'gemini/telemetry.log',
    adapter: 'gemini-telemetry',
    check: (r) => {
      expect(r.readings).toEqual([]);
      expect(warningsOf(r)).toEqual([['rate_limit', null, null]]);
      expect(r.warnings[0]).toMatchObject({
        source: 'gemini-telemetry',
        observed_at: '2026-08-20T09:58:40.007Z',
        executor: 'c2b0dd60-9a41-4f3e-8e5d-2b7f1c6a0e93',
      });
      expect(r.warnings[0]?.text).toMatch(/^Gemini CLI API error 429 for gemini-2\.5-pro: \[429 Too Many Requests\]/);
      expect(r.unknown.map((u) => u.metric)).toEqual(['context', 'tokens']);
      expect(r.events.map((e) => e.name)).toEqual(['api_error']);
    },
  },
  {
    file: 'gemini/telemetry.daily-quota.log',
    adapter: 'gemini-telemetry',
    check: (r) => {
      expect(warningsOf(r)).toEqual([['insufficient_quota', false, null]]);
      expect(r.events).toHaveLength(2);
    },
  },
  {
    file: 'gemini/telemetry-0.61.api-error-per-day.log',
    adapter: 'gemini-telemetry',
    check: (r) => {
      // error.type is the raw "ApiError": only the quotaId inside the error text says the quota is daily.
      expect(warningsOf(r)).toEqual([['insufficient_quota', false, null]]);
      expect(r.warnings[0]).toMatchObject({ observed_at: '2026-08-20T09:59:30.247Z', executor: 'c2b0dd60-9a41-4f3e-8e5d-2b7f1c6a0e93' });
      expect(r.events.map((e) => [e.name, e.detail['error_type']])).toEqual([['api_error', 'ApiError']]);
      expect(r.skipped).toEqual([]);
    },
  },
  {
    file: 'gemini/session-0.61.jsonl',
    adapter: 'gemini-telemetry',
    check: (r) => {
      // A headless 0.61 session refused with a 429 records no error message: the outfile is where it shows.
      expect(r.warnings).toEqual([]);
      expect(r.events).toEqual([]);
      expect(r.skipped).toEqual([]);
      expect(r.route.session_id).toBe('c2b0dd60-9a41-4f3e-8e5d-2b7f1c6a0e93');
    },
  },
  {
    file: 'gemini/collector-otlp.jsonl',
    adapter: 'gemini-telemetry',
    check: (r) => {
      expect(warningsOf(r)).toEqual([['rate_limit', null, null]]);
      expect(r.warnings[0]?.text).toMatch(/gemini-2\.5-flash/);
    },
  },
  {
    file: 'gemini/session-quota-error.json',
    adapter: 'gemini-telemetry',
    check: (r) => {
      expect(warningsOf(r)).toEqual([['rate_limit', null, null]]);
      expect(r.route.session_id).toBe('c2b0dd60-9a41-4f3e-8e5d-2b7f1c6a0e93');
    },
  },
  {
    file: 'copilot/events-1.0.102-429.jsonl',
    adapter: 'copilot-events',
    check: (r) => {
      expect(r.route).toEqual({ cwd: '/home/dev/src/acme-api', session_id: '6f1c2b7e-3d4a-4c5b-9e8f-0a1b2c3d4e5f' });
      expect(warningsOf(r)).toEqual([['rate_limit', true, null]]);
      expect(r.readings).toEqual([]);
    },
  },
  {
    file: 'copilot/statusline-1.0.102-after-turn.json',
    adapter: 'copilot-statusline',
    check: (r) => {
      expect(readingsOf(r)).toEqual([['context', null, 10]]);
      expect(r.readings[0]).toMatchObject({ source: 'copilot-statusline', resets_at: null, executor: '6f1c2b7e-3d4a-4c5b-9e8f-0a1b2c3d4e5f' });
      expect(r.route).toEqual({ cwd: '/home/dev/src/acme-api', session_id: '6f1c2b7e-3d4a-4c5b-9e8f-0a1b2c3d4e5f' });
      expect(r.unknown).toEqual([]);
    },
  },
  {
    file: 'copilot/statusline-1.0.102-first-render.json',
    adapter: 'copilot-statusline',
    check: (r) => {
      expect(r.readings).toEqual([]);
      expect(r.unknown).toEqual([{ metric: 'context', reason: expect.stringMatching(/current_context_tokens is 0/) }]);
    },
  },
  {
    file: 'qwen/statusline-0.24.4-after-turn.json',
    adapter: 'qwen-statusline',
    check: (r) => {
      expect(readingsOf(r)).toEqual([['context', null, 0.8]]);
      expect(r.route).toEqual({ cwd: '/home/dev/src/acme-api', session_id: '4cf705cc-ea7c-42b2-9ae3-73449d753e0a' });
    },
  },
  {
    file: 'qwen/statusline-0.24.4-unknown-window.json',
    adapter: 'qwen-statusline',
    check: (r) => {
      expect(r.readings).toEqual([]);
      expect(r.unknown).toEqual([{ metric: 'context', reason: expect.stringMatching(/context_window_size is 0: Qwen Code knows no context window/) }]);
    },
  },
  {
    file: 'qwen/outfile-0.24.4-429.log',
    adapter: 'qwen-telemetry',
    check: (r) => {
      expect(warningsOf(r)).toEqual([['rate_limit', null, null]]);
      expect(r.warnings[0]?.executor).toBe('4cf705cc-ea7c-42b2-9ae3-73449d753e0a');
      expect(r.readings).toEqual([]);
    },
  },
];

describe('the telemetry corpus (test/fixtures/telemetry)', () => {
  it.each(CASES)('$file through $adapter', ({ file, adapter, check }) => {
    const result = ADAPTERS[adapter](corpus(file), CTX);
    check(result);
    expectSchemaValid(result);
  });

  it('every corpus file is run here and has a provenance line in the README', () => {
    const root = fileURLToPath(CORPUS);
    const files = readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name !== 'README.md')
      .map((e) => relative(root, `${e.parentPath}/${e.name}`))
      .sort();
    expect(files).toEqual(CASES.map((c) => c.file).sort());
    const readme = corpus('README.md');
    for (const file of files) expect(readme, file).toMatch(new RegExp(`^\\| ${file.replaceAll('.', '\\.')} \\| [a-z-]+ \\| .{20,} \\|`, 'm'));
  });
});
