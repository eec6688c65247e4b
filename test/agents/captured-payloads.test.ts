import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseClaudeStatusline, parseCodexRollout, parseGeminiTelemetry } from '../../adapters/telemetry/index.js';

/** What the real agents wrote (test/fixtures/agents/README.md), read by the daemon's own adapters. */
const captured = (path: string) => readFileSync(new URL(`../fixtures/agents/${path}`, import.meta.url), 'utf8');
const numbers = (readings: readonly { metric: string; used_percent: number | null; resets_at: number | null }[]) =>
  readings.map(({ metric, used_percent, resets_at }) => ({ metric, used_percent, resets_at }));

describe('payloads the real agents wrote', () => {
  it('Claude Code 2.1.328: the first payload is all unknown; the later one gives context, five_hour and seven_day', () => {
    const at = { observedAt: new Date('2026-12-02T01:39:00Z') };
    const first = parseClaudeStatusline(captured('claude-code/statusline-first-2.1.328.json'), at);
    expect(first.readings).toEqual([]);
    expect(first.unknown.map((u) => u.metric)).toEqual(['context', 'five_hour', 'seven_day']);
    const later = parseClaudeStatusline(captured('claude-code/statusline-rate-limits-2.1.328.json'), at);
    expect(numbers(later.readings)).toEqual([
      { metric: 'context', used_percent: 59, resets_at: null },
      { metric: 'five_hour', used_percent: 82, resets_at: 1796184060 },
      { metric: 'seven_day', used_percent: 41, resets_at: 1796522100 },
    ]);
    expect(later.route).toEqual({ cwd: '/home/dev/src/acme-api', session_id: '3f0c9a52-7d1e-4b6a-9c2e-5a1b8f0d4e21' });
  });

  it('Codex CLI 0.169.0: the token_count event gives five_hour and weekly by window_minutes; context stays unknown', () => {
    const result = parseCodexRollout(captured('codex/rollout-0.169.0.jsonl'), { observedAt: new Date('2026-12-02T01:20:13Z') });
    expect(numbers(result.readings)).toEqual([
      { metric: 'five_hour', used_percent: 82, resets_at: 1796185200 },
      { metric: 'weekly', used_percent: 40, resets_at: 1796693400 },
    ]);
    expect(result.route).toEqual({ cwd: '/home/dev/src/acme-api', session_id: '00000000-0000-7000-8000-000000000001' });
    expect(result.skipped).toEqual([]);
  });

  it('Gemini CLI 0.61.0: the api_error record of a per-day quota 429 is one provider warning, no reading', () => {
    const record = captured('gemini-cli/api-error-0.61.0.json');
    const at = new Date(Date.parse(String((JSON.parse(record) as { attributes: Record<string, unknown> }).attributes['event.timestamp'])) + 60_000);
    const result = parseGeminiTelemetry(record, { observedAt: at });
    expect(result.readings).toEqual([]);
    expect(result.warnings).toHaveLength(1);
  });
});
