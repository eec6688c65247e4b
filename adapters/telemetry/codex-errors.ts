import type { ProviderWarning } from '../../schemas/telemetry.schema.js';
import type { AgentEvent } from './adapter-contract.js';
import { agentEvent, RECENT_ERROR_MS, warning, type Stamp } from './record-builders.js';
import { isRecord, lenientString, type JsonRecord } from './shape.js';

/**
 * `codex_error_info` values (codex-rs protocol `CodexErrorInfo`, snake_case) that mean the account's
 * usage limit stopped the turn. A headless `codex exec` refused with 429 `usage_limit_reached` writes
 * no rate-limit numbers at all (its token_count has `primary: null, secondary: null`): this is then
 * the only sign in the rollout that the session cannot go on.
 */
const USAGE_LIMIT = 'usage_limit_exceeded';

export interface CodexErrorFindings {
  readonly warnings: ProviderWarning[];
  readonly events: AgentEvent[];
}

/**
 * The error a rollout event carries: `event_msg` `{type: "error", message, codex_error_info}`
 * (`EventMsg::Error`), or `{type: "task_complete", error: {message, codex_error_info}}` as Codex 0.169
 * ends a refused turn. `codex_error_info` is a unit variant's name or, for variants with data, an
 * object with that one key. A usage limit becomes a warning that waiting does not lift: the reset it
 * names ("try again at 2:47 AM") is a local clock time with no date, so no retry time is read from it.
 * One warning per turn, and only for an error from the last minutes (by the line's own time).
 */
export function readCodexError(found: CodexErrorFindings, payload: JsonRecord, stamp: Stamp, timeMs: number, nowMs: number, seenTurns: Set<string>): void {
  const error = payload['type'] === 'error' ? payload : isRecord(payload['error']) ? payload['error'] : null;
  if (error === null) return;
  const info = errorInfoName(error['codex_error_info']);
  if (info === null) return;
  const turn = lenientString(payload, 'turn_id', 200);
  found.events.push(agentEvent(stamp, 'codex_error', { codex_error_info: info, turn_id: turn }));
  if (info !== USAGE_LIMIT || nowMs - timeMs > RECENT_ERROR_MS) return;
  const key = turn ?? `${stamp.observedAt}`;
  if (seenTurns.has(key)) return;
  seenTurns.add(key);
  const message = lenientString(error, 'message') ?? 'usage limit reached';
  found.warnings.push(warning(stamp, 'rate_limit', `Codex usage limit (${info}): ${message}`, false, null));
}

function errorInfoName(value: unknown): string | null {
  if (typeof value === 'string' && value !== '') return value.slice(0, 200);
  if (!isRecord(value)) return null;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] !== undefined ? keys[0].slice(0, 200) : null;
}
