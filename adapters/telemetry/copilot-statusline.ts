import type { Reading } from '../../schemas/telemetry.schema.js';
import type { AdapterResult, ParseContext, UnknownMetric } from './adapter-contract.js';
import { reading, result, sha256Hex, type Stamp } from './record-builders.js';
import { isRecord, parseJsonObject, type ShapeSpec } from './shape.js';
import { contextPercent, statusLineRoute } from './status-line-payload.js';

const SPEC: ShapeSpec = {
  adapter: 'copilot-statusline',
  hint: 'send the one JSON object GitHub Copilot CLI writes to a statusLine command on stdin',
};

/**
 * Copilot CLI status line → context: `context_window.current_context_used_percentage`, the share of
 * the model's window its current context fills, as Copilot computed it (its footer's figure). Its
 * Claude-shaped `used_percentage` is not read: Copilot 1.0.102 fills it with the session's
 * cumulative tokens over the window (1 % after a turn whose context filled 10 %), a different figure.
 * Copilot sends no quota windows here; token counts are never divided.
 */
export function parseCopilotStatusline(raw: string, ctx: ParseContext): AdapterResult {
  const payload = parseJsonObject(SPEC, raw);
  const { executor, cwd } = statusLineRoute(payload);
  const stamp: Stamp = { source: 'copilot-statusline', observedAt: ctx.observedAt.toISOString(), rawSha256: sha256Hex(raw), executor };
  const readings: Reading[] = [];
  const unknown: UnknownMetric[] = [];
  const context = contextPercent(payload, 'current_context_used_percentage', {
    absent: 'Copilot CLI before 1.0.102 may send none',
    unset: 'not reported by this Copilot CLI',
  });
  if (typeof context !== 'number') unknown.push(context);
  else if (notCountedYet(payload))
    unknown.push({
      metric: 'context',
      reason: 'context_window.current_context_tokens is 0: Copilot has not counted the context yet (before its first model call)',
    });
  else readings.push(reading(stamp, 'context', context, null));
  return result({ readings, unknown, route: { cwd, session_id: executor } });
}

/**
 * Before its first model call Copilot sends 0 % over 0 counted tokens, though its context already
 * holds the system prompt (12,377 tokens in the first count of the real run): a placeholder, not a reading.
 */
function notCountedYet(payload: Record<string, unknown>): boolean {
  const window = payload['context_window'];
  return isRecord(window) && window['current_context_tokens'] === 0;
}
