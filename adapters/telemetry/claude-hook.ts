import type { ProviderWarning } from '../../schemas/telemetry.schema.js';
import type { AdapterResult, AgentEvent, ParseContext } from './adapter-contract.js';
import { transcriptApiError } from './claude-transcript.js';
import { hookEvent } from './hook-event.js';
import { agentEvent, result, sha256Hex, warning, type Stamp } from './record-builders.js';
import {
  describeType,
  EPOCH_SECONDS_RANGE,
  invalid,
  optExecutor,
  optNumber,
  optRecord,
  optString,
  parseJsonObject,
  type JsonRecord,
  type ShapeSpec,
} from './shape.js';

const SPEC: ShapeSpec = {
  adapter: 'claude-hook',
  hint:
    'send the one JSON object Claude Code writes to a hook command on stdin (it has hook_event_name), ' +
    'an Agent SDK message of type "rate_limit_event", or a transcript API error record (isApiErrorMessage)',
};

/** Unified rate-limit statuses that mean the account is at or near a limit. */
const NEAR_LIMIT_STATUSES: ReadonlySet<string> = new Set(['allowed_warning', 'rejected']);

/**
 * Claude Code hook payload → one lifecycle event, never a reading: no hook carries a usage
 * percentage. A `StopFailure` caused by a rate limit is also a provider warning, since the agent
 * just stopped on it; so is the transcript's record of that stop (claude-transcript.ts), which the
 * daemon reads when headless Claude Code killed the StopFailure hook.
 */
export function parseClaudeHook(raw: string, ctx: ParseContext): AdapterResult {
  const payload = parseJsonObject(SPEC, raw);
  // A transcript record names its session `sessionId`; hooks say `session_id`.
  const fromTranscript = payload['hook_event_name'] === undefined && payload['type'] === 'assistant' && payload['isApiErrorMessage'] === true;
  const executor = fromTranscript ? optExecutor(SPEC, payload, 'sessionId', 'sessionId') : optExecutor(SPEC, payload, 'session_id', 'session_id');
  const stamp: Stamp = {
    source: 'claude-hook',
    observedAt: ctx.observedAt.toISOString(),
    rawSha256: sha256Hex(raw),
    executor,
  };
  const route = { cwd: optString(SPEC, payload, 'cwd', 'cwd'), session_id: executor };

  if (fromTranscript) {
    const { event, warnings } = transcriptApiError(SPEC, stamp, payload);
    return result({ events: [event], warnings, route });
  }
  if (payload['hook_event_name'] === undefined && payload['type'] === 'rate_limit_event') {
    const { event, warnings } = sdkRateLimitEvent(stamp, payload);
    return result({ events: [event], warnings, route });
  }

  const name = payload['hook_event_name'];
  if (typeof name !== 'string' || name === '') {
    throw invalid(SPEC, `hook_event_name must be a non-empty string, got ${describeType(name)}`);
  }
  const event = hookEvent(SPEC, stamp, payload, name, '');
  const warnings: ProviderWarning[] = [];
  if (name === 'StopFailure' && event.detail['error'] === 'rate_limit') {
    const details = event.detail['error_details'];
    const text = `Claude Code stopped on a rate limit${details === null || details === undefined ? '' : `: ${details}`}`;
    // A rate limit lifts when its window rolls over: waiting helps, unlike a spend cap.
    warnings.push(warning(stamp, 'rate_limit', text, true, null));
  }
  return result({ events: [event], warnings, route });
}

/**
 * The Agent SDK's stream message. Its `utilization` is a fraction that is often null; this adapter
 * keeps its promise of no readings and passes the numbers on only as event detail and warning text.
 */
function sdkRateLimitEvent(stamp: Stamp, payload: JsonRecord): { event: AgentEvent; warnings: ProviderWarning[] } {
  const info = optRecord(SPEC, payload, 'rate_limit_info', 'rate_limit_info');
  if (info === null) throw invalid(SPEC, 'rate_limit_event has no rate_limit_info object');
  const status = optString(SPEC, info, 'status', 'rate_limit_info.status');
  const windowType = optString(SPEC, info, 'rateLimitType', 'rate_limit_info.rateLimitType');
  const resetsAt = optNumber(SPEC, info, 'resetsAt', 'rate_limit_info.resetsAt', EPOCH_SECONDS_RANGE);
  const utilization = optNumber(SPEC, info, 'utilization', 'rate_limit_info.utilization', { min: 0, max: 1000 });
  const detail = {
    status,
    rateLimitType: windowType,
    resetsAt: resetsAt === null ? null : String(resetsAt),
    utilization: utilization === null ? null : String(utilization),
  };
  const warnings: ProviderWarning[] = [];
  if (status !== null && NEAR_LIMIT_STATUSES.has(status)) {
    const parts = [
      `${windowType ?? 'unnamed'} window`,
      utilization === null ? null : `utilization ${utilization}`,
      resetsAt === null ? null : `resets at ${new Date(resetsAt * 1000).toISOString()}`,
    ].filter((part): part is string => part !== null);
    warnings.push(warning(stamp, 'rate_limit', `Claude rate limit status ${status} (${parts.join(', ')})`, true, null));
  }
  return { event: agentEvent(stamp, 'rate_limit_event', detail), warnings };
}
