import type { AdapterResult, ParseContext } from './adapter-contract.js';
import { parseAgentStatusLine, type AgentStatusLine } from './status-line-payload.js';

/**
 * Copilot CLI status line → context: `context_window.current_context_used_percentage`, the share of
 * the model's window its current context fills, as Copilot computed it (its footer's figure). Its
 * Claude-shaped `used_percentage` is not read: Copilot 1.0.102 fills it with the session's
 * cumulative tokens over the window (1 % after a turn whose context filled 10 %), a different figure.
 * Copilot sends no quota windows here.
 */
const COPILOT: AgentStatusLine = {
  source: 'copilot-statusline',
  agent: 'GitHub Copilot CLI',
  key: 'current_context_used_percentage',
  why: { absent: 'Copilot CLI before 1.0.102 may send none', unset: 'not reported by this Copilot CLI' },
  // Before its first model call Copilot sends 0 % over 0 counted tokens, though its context already
  // holds the system prompt (12,377 tokens at the first count of the real run).
  placeholderWhenZero: [{ key: 'current_context_tokens', meaning: 'Copilot has not counted the context yet (before its first model call)' }],
};

export const parseCopilotStatusline = (raw: string, ctx: ParseContext): AdapterResult => parseAgentStatusLine(COPILOT, raw, ctx);
