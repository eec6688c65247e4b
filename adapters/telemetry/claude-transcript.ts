import type { ProviderWarning } from '../../schemas/telemetry.schema.js';
import type { AgentEvent } from './adapter-contract.js';
import { agentEvent, warning, type Stamp } from './record-builders.js';
import { EPOCH_SECONDS_RANGE, isRecord, optNumber, optRecord, optString, type JsonRecord, type ShapeSpec } from './shape.js';

/**
 * Claude Code's session transcript (`transcript_path`, JSON lines) as far as a headless stop needs it.
 * `claude -p` starts the StopFailure hook without waiting for it and kills it as it exits (in 1 of 8
 * runs it never started), but it waits for SessionEnd, and by then the transcript holds the stop as an
 * assistant record of its own: `isApiErrorMessage: true`, `error: "rate_limit"`, `apiErrorStatus`,
 * `quotaLimits {status, rateLimitType, resetsAt}` (docs/agents/claude-code.md).
 */

/** The transcript a SessionEnd payload names, with its session: where the daemon looks for the stop. */
export function transcriptOfSessionEnd(raw: string): { path: string; sessionId: string } | null {
  let payload: unknown;
  try {
    payload = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!isRecord(payload) || payload['hook_event_name'] !== 'SessionEnd') return null;
  const path = payload['transcript_path'];
  const sessionId = payload['session_id'];
  return typeof path === 'string' && path !== '' && typeof sessionId === 'string' && sessionId !== '' ? { path, sessionId } : null;
}

/**
 * The last assistant record of a transcript's tail, when it is an API error of this session: the line
 * itself (for the claude-hook adapter) and its time. Only the last one counts: an error the session
 * got past (a later answer) is no news. Unless the tail starts at the file's start, its first line may
 * be cut and is never read, so a cut-off answer can never let an older error through.
 */
export function lastApiError(tail: string, sessionId: string, fromStart: boolean): { line: string; atMs: number } | null {
  const lines = tail.split('\n');
  const first = fromStart ? 0 : 1;
  for (let i = lines.length - 1; i >= first; i--) {
    const line = (lines[i] ?? '').trim();
    if (line === '') continue;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isRecord(record) || record['type'] !== 'assistant') continue;
    if (record['isApiErrorMessage'] !== true || record['sessionId'] !== sessionId) return null;
    const atMs = typeof record['timestamp'] === 'string' ? Date.parse(record['timestamp']) : NaN;
    return Number.isFinite(atMs) ? { line, atMs } : null;
  }
  return null;
}

/**
 * A transcript API error record → an `api_error` event, and a provider warning when Claude Code says
 * the stop was a rate limit (the same judgement as its StopFailure `error: "rate_limit"`).
 */
export function transcriptApiError(spec: ShapeSpec, stamp: Stamp, payload: JsonRecord): { event: AgentEvent; warnings: ProviderWarning[] } {
  const error = optString(spec, payload, 'error', 'error');
  const apiError = optString(spec, payload, 'apiError', 'apiError');
  const status = optNumber(spec, payload, 'apiErrorStatus', 'apiErrorStatus', { min: 100, max: 599 });
  const quota = optRecord(spec, payload, 'quotaLimits', 'quotaLimits');
  const windowType = quota === null ? null : optString(spec, quota, 'rateLimitType', 'quotaLimits.rateLimitType');
  const resetsAt = quota === null ? null : optNumber(spec, quota, 'resetsAt', 'quotaLimits.resetsAt', EPOCH_SECONDS_RANGE);
  const detail = { error, api_error: apiError, status: status === null ? null : String(status), rate_limit_type: windowType };
  const warnings: ProviderWarning[] = [];
  if (error === 'rate_limit') {
    const parts = [
      apiError,
      windowType === null ? null : `${windowType} window`,
      resetsAt === null ? null : `resets at ${new Date(resetsAt * 1000).toISOString()}`,
    ].filter((part): part is string => part !== null);
    const http = status === null ? '' : ` (HTTP ${status})`;
    const text = `Claude Code stopped on a rate limit${http}${parts.length === 0 ? '' : `: ${parts.join(', ')}`}`;
    // A rate limit lifts when its window rolls over, as for StopFailure.
    warnings.push(warning(stamp, 'rate_limit', text, true, null));
  }
  return { event: agentEvent(stamp, 'api_error', detail), warnings };
}
