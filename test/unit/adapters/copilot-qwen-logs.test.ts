import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseCopilotEvents, parseQwenTelemetry, RECENT_ERROR_MS } from '../../../adapters/telemetry/index.js';
import { CTX, FIXTURE_TIME } from './fixture-helpers.js';

const captured = (path: string) => readFileSync(new URL(`../../fixtures/telemetry/${path}`, import.meta.url), 'utf8');
const at = (laterMs: number) => ({ observedAt: new Date(FIXTURE_TIME.getTime() + laterMs) });

describe('copilot-events (Copilot CLI 1.0.102 events.jsonl, captured)', () => {
  const log = captured('copilot/events-1.0.102-429.jsonl');

  it('the warning is of the session that failed and quotes the provider; context stays unknown', () => {
    const result = parseCopilotEvents(log, CTX);
    expect(result.warnings.map((w) => [w.source, w.executor])).toEqual([['copilot-events', '6f1c2b7e-3d4a-4c5b-9e8f-0a1b2c3d4e5f']]);
    expect(result.warnings[0]?.text).toContain('429 Rate limit reached');
    expect(result.unknown.map((u) => u.metric)).toEqual(['context']);
  });

  it('an error older than the recent window is an event only; a quota the provider says is spent does not recover', () => {
    expect(parseCopilotEvents(log, at(RECENT_ERROR_MS + 60_000)).warnings).toEqual([]);
    const spent = log.replace('429 Rate limit reached', '429 You exceeded your current quota (insufficient_quota)');
    expect(parseCopilotEvents(spent, CTX).warnings.map((w) => [w.kind, w.recovers])).toEqual([['insufficient_quota', false]]);
  });

  it('an error with another status is an event, never a warning', () => {
    const other = log.replace('"statusCode":429', '"statusCode":500');
    const result = parseCopilotEvents(other, CTX);
    expect(result.warnings).toEqual([]);
    expect(result.events.map((e) => e.detail)).toEqual([{ error_type: 'rate_limit', status_code: '500' }]);
  });
});

describe('qwen-telemetry (Qwen Code 0.24.4 telemetry outfile, captured)', () => {
  it('the warning names Qwen Code; gemini_cli records are not read as Qwen', () => {
    const log = captured('qwen/outfile-0.24.4-429.log');
    const result = parseQwenTelemetry(log, CTX);
    expect(result.warnings.map((w) => [w.source, w.text])).toEqual([['qwen-telemetry', expect.stringContaining('Qwen Code API error 429')]]);
    expect(result.unknown.map((u) => u.reason)).toEqual([expect.stringContaining('Qwen Code reports token counts'), expect.stringContaining('Qwen Code')]);
    expect(parseQwenTelemetry(log.replaceAll('qwen-code.', 'gemini_cli.'), CTX).warnings).toEqual([]);
  });
});
