import type { AdapterResult, ParseContext } from './adapter-contract.js';
import { parseAgentStatusLine, type AgentStatusLine } from './status-line-payload.js';

/**
 * Qwen Code status line (`ui.statusLine`, command mode) → context: `context_window.used_percentage`,
 * which Qwen Code 0.24.4 computes itself from the last request's prompt tokens over the model's window
 * (rounded to 0.1, capped at 100). It sends 0 both before the first request and when it knows no window
 * for the model (`context_window_size` 0): those are no readings.
 */
const QWEN: AgentStatusLine = {
  source: 'qwen-statusline',
  agent: 'Qwen Code',
  key: 'used_percentage',
  why: { absent: 'Qwen Code sends it in every status line payload', unset: 'not reported by this Qwen Code' },
  placeholderWhenZero: [
    { key: 'context_window_size', meaning: 'Qwen Code knows no context window for this model (set model.generationConfig.contextWindowSize)' },
    { key: 'current_usage', meaning: 'Qwen Code has not counted a prompt yet (before its first model call)' },
  ],
};

export const parseQwenStatusline = (raw: string, ctx: ParseContext): AdapterResult => parseAgentStatusLine(QWEN, raw, ctx);
