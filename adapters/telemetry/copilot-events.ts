import type { ProviderWarning } from '../../schemas/telemetry.schema.js';
import type { AdapterResult, AgentEvent, ParseContext, UnknownMetric } from './adapter-contract.js';
import { readJsonLines } from './jsonl.js';
import { agentEvent, RECENT_ERROR_MS, result, sha256Hex, warning, type Stamp } from './record-builders.js';
import { EXECUTOR_MAX_LENGTH, invalid, isRecord, lenientString, type ShapeSpec } from './shape.js';

const SPEC: ShapeSpec = {
  adapter: 'copilot-events',
  hint: "send GitHub Copilot CLI's session log, ~/.copilot/session-state/<session id>/events.jsonl (one JSON event per line)",
};

/**
 * Copilot CLI writes no quota and no window size to disk: its session log has token counts only
 * (`session.shutdown` `currentTokens`), and the context percentage exists only in what it hands a
 * status-line command. A percentage from these would be ours, which the telemetry rule forbids.
 */
const NO_PERCENT_REASON = "Copilot CLI's session log has token counts, never a quota or context percentage";

/** A 429 body's words for a quota that waiting does not restore (OpenAI's, which Copilot's message quotes). */
const NO_RECOVERY = /insufficient_quota|exceeded your current quota|spend(?:ing)? (?:cap|limit)/i;

/**
 * Copilot CLI's `events.jsonl` → provider warnings. `session.start` names the session and its cwd;
 * a `session.error` with `statusCode` 429 (Copilot retries a 429 a few times, then ends the turn
 * with this event) is a warning, from the last minutes only (by the line's own timestamp). Every
 * other event is left alone.
 */
export function parseCopilotEvents(raw: string, ctx: ParseContext): AdapterResult {
  const rawSha256 = sha256Hex(raw);
  const { lines, skipped } = readJsonLines(SPEC, raw);
  if (lines.length === 0 && skipped.length > 0) throw invalid(SPEC, `no JSON event in the payload (line ${skipped[0]?.line ?? 1})`);
  const nowMs = ctx.observedAt.getTime();
  let cwd: string | null = null;
  let session: string | null = null;
  const errors: { data: Record<string, unknown>; timeMs: number }[] = [];
  for (const { value } of lines) {
    const data = isRecord(value['data']) ? value['data'] : null;
    if (data === null) continue;
    if (value['type'] === 'session.start') {
      session = lenientString(data, 'sessionId', EXECUTOR_MAX_LENGTH) ?? session;
      cwd = lenientString(isRecord(data['context']) ? data['context'] : null, 'cwd') ?? cwd;
    } else if (value['type'] === 'session.error') {
      errors.push({ data, timeMs: Date.parse(lenientString(value, 'timestamp') ?? '') });
    }
  }
  const stamp: Stamp = { source: 'copilot-events', observedAt: ctx.observedAt.toISOString(), rawSha256, executor: session };
  const warnings: ProviderWarning[] = [];
  const events: AgentEvent[] = [];
  for (const { data, timeMs } of errors) {
    const status = typeof data['statusCode'] === 'number' ? data['statusCode'] : null;
    const message = lenientString(data, 'message') ?? 'no message';
    events.push(
      agentEvent(stamp, 'session_error', { error_type: lenientString(data, 'errorType', 200), status_code: status === null ? null : String(status) }),
    );
    if (status !== 429 || !Number.isFinite(timeMs) || nowMs - timeMs > RECENT_ERROR_MS) continue;
    const lasting = NO_RECOVERY.test(message);
    warnings.push(warning(stamp, lasting ? 'insufficient_quota' : 'rate_limit', `Copilot CLI: ${message}`, !lasting, null));
  }
  const unknown: UnknownMetric[] = [{ metric: 'context', reason: NO_PERCENT_REASON }];
  return result({ unknown, warnings, events, route: { cwd, session_id: session }, skipped });
}
