import type { Source } from '../../schemas/telemetry.schema.js';
import type { Adapter } from './adapter-contract.js';
import { parseAnthropicHeaders } from './anthropic-headers.js';
import { parseClaudeHook } from './claude-hook.js';
import { parseClaudeStatusline } from './claude-statusline.js';
import { parseCodexRollout } from './codex-rollout.js';
import { parseCopilotEvents } from './copilot-events.js';
import { parseCopilotStatusline } from './copilot-statusline.js';
import { parseGeminiTelemetry, parseQwenTelemetry } from './gemini-telemetry.js';
import { parseJsonFile } from './json-file.js';
import { parseOpenaiHeaders } from './openai-headers.js';
import { parseQwenStatusline } from './qwen-statusline.js';

export type { Adapter, AdapterResult, AgentEvent, ParseContext, PayloadRoute, SkippedLine, UnknownMetric } from './adapter-contract.js';
export { parseAnthropicHeaders } from './anthropic-headers.js';
export { parseClaudeHook } from './claude-hook.js';
export { parseClaudeStatusline } from './claude-statusline.js';
export { parseCodexRollout, rolloutRoute } from './codex-rollout.js';
export { parseCopilotEvents } from './copilot-events.js';
export { parseCopilotStatusline } from './copilot-statusline.js';
export { parseGeminiTelemetry, parseQwenTelemetry, RECENT_ERROR_MS } from './gemini-telemetry.js';
export { parseJsonFile } from './json-file.js';
export { parseOpenaiHeaders } from './openai-headers.js';
export { parseQwenStatusline } from './qwen-statusline.js';
export { parseProviderErrorBody, type Provider } from './provider-error-body.js';
export { isZeroPlaceholder, ZERO_PLACEHOLDER_REASON } from './zero-placeholder.js';

/**
 * Adapter name → parse function. `satisfies` against the schema's SOURCES, so adding a source
 * without an adapter (or the reverse) fails to compile. Frozen: a registry is not a plug-in point.
 */
export const ADAPTERS: Readonly<Record<Source, Adapter>> = Object.freeze({
  'claude-statusline': parseClaudeStatusline,
  'claude-hook': parseClaudeHook,
  'codex-rollout': parseCodexRollout,
  'anthropic-headers': parseAnthropicHeaders,
  'openai-headers': parseOpenaiHeaders,
  'json-file': parseJsonFile,
  'gemini-telemetry': parseGeminiTelemetry,
  'copilot-events': parseCopilotEvents,
  'copilot-statusline': parseCopilotStatusline,
  'qwen-telemetry': parseQwenTelemetry,
  'qwen-statusline': parseQwenStatusline,
} satisfies Record<Source, Adapter>);

/** Lookup by a user-typed name: own keys only, so `constructor` or `__proto__` find nothing. */
export function adapterFor(name: string): Adapter | undefined {
  return Object.hasOwn(ADAPTERS, name) ? ADAPTERS[name as Source] : undefined;
}
