import { describe, expect, it } from 'vitest';
import { parseCopilotStatusline, parseQwenStatusline } from '../../../adapters/telemetry/index.js';
import { CTX, expectInvalidBody } from './fixture-helpers.js';

const payload = (contextWindow: unknown) => JSON.stringify({ session_id: 's1', cwd: '/repo', context_window: contextWindow });

describe('copilot-statusline', () => {
  it('reads only the percentage Copilot printed for its current context, never its cumulative used_percentage or token counts', () => {
    const result = parseCopilotStatusline(
      payload({ used_percentage: 1, total_tokens: 1005, context_window_size: 128000, current_context_tokens: 12377, current_context_used_percentage: 10 }),
      CTX,
    );
    expect(result.readings.map((r) => [r.metric, r.used_percent])).toEqual([['context', 10]]);
  });

  it('takes no number where Copilot gave none: a missing percentage is unknown, not computed from the tokens beside it', () => {
    const result = parseCopilotStatusline(payload({ used_percentage: 40, current_context_tokens: 51200, context_window_size: 128000 }), CTX);
    expect(result.readings).toEqual([]);
    expect(result.unknown).toEqual([{ metric: 'context', reason: expect.stringMatching(/current_context_used_percentage is absent/) }]);
  });

  it('a mistyped percentage costs the reading, not the payload; no context_window at all is unknown too', () => {
    expect(parseCopilotStatusline(payload({ current_context_used_percentage: 'lots' }), CTX).unknown[0]?.reason).toMatch(/is not a number/);
    expect(parseCopilotStatusline(JSON.stringify({ session_id: 's1' }), CTX).unknown[0]?.reason).toMatch(/context_window is absent/);
  });

  it('refuses what is not one JSON object, saying what to send', () => {
    expect(expectInvalidBody(() => parseCopilotStatusline('[]', CTX)).hint).toMatch(/GitHub Copilot CLI writes to a status line command/);
  });
});

describe('qwen-statusline', () => {
  const qwen = (contextWindow: Record<string, unknown>) =>
    parseQwenStatusline(JSON.stringify({ session_id: 's1', workspace: { current_dir: '/repo' }, context_window: contextWindow }), CTX);

  it("reads Qwen's own used_percentage, routed by workspace.current_dir", () => {
    const result = qwen({ context_window_size: 128000, current_usage: 1000, used_percentage: 0.8 });
    expect(result.readings.map((r) => [r.source, r.metric, r.used_percent])).toEqual([['qwen-statusline', 'context', 0.8]]);
    expect(result.route).toEqual({ cwd: '/repo', session_id: 's1' });
  });

  it('its 0 before the first request, or for a model whose window it does not know, is no reading', () => {
    expect(qwen({ context_window_size: 128000, current_usage: 0, used_percentage: 0 }).unknown[0]?.reason).toMatch(/current_usage is 0/);
    expect(qwen({ context_window_size: 0, current_usage: 1000, used_percentage: 0 }).unknown[0]?.reason).toMatch(/contextWindowSize/);
  });
});
