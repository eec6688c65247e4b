import type { Metric, Reading } from '../../schemas/telemetry.schema.js';
import type { AdapterResult, ParseContext, UnknownMetric } from './adapter-result.js';
import { reading, result, sha256Hex, type Stamp } from './result.js';
import {
  EPOCH_SECONDS_RANGE,
  missingWord,
  optExecutor,
  optNumber,
  optRecord,
  optString,
  parseJsonObject,
  PERCENT_RANGE,
  type JsonRecord,
  type ShapeSpec,
} from './shape.js';

const SPEC: ShapeSpec = {
  adapter: 'claude-statusline',
  hint: 'send the one JSON object Claude Code writes to a statusLine command on stdin',
};

/** The two quota windows Claude Code reports, by their key under `rate_limits`. */
const WINDOWS: readonly { key: string; metric: Metric }[] = [
  { key: 'five_hour', metric: 'five_hour' },
  { key: 'seven_day', metric: 'seven_day' },
];

/**
 * Claude Code status line → context, five_hour and seven_day, each either the number Claude Code
 * printed or an unknown entry. Token counts (`total_input_tokens`, `current_usage`) are never used:
 * before 2.1.132 `total_input_tokens` was cumulative, and any division would be our estimate.
 */
export function parseClaudeStatusline(raw: string, ctx: ParseContext): AdapterResult {
  const payload = parseJsonObject(SPEC, raw);
  const executor = optExecutor(SPEC, payload, 'session_id', 'session_id');
  const workspace = optRecord(SPEC, payload, 'workspace', 'workspace');
  const cwd = optString(SPEC, payload, 'cwd', 'cwd') ?? (workspace === null
    ? null
    : optString(SPEC, workspace, 'current_dir', 'workspace.current_dir'));
  const stamp: Stamp = {
    source: 'claude-statusline',
    observedAt: ctx.observedAt.toISOString(),
    rawSha256: sha256Hex(raw),
    executor,
  };
  const readings: Reading[] = [];
  const unknown: UnknownMetric[] = [];

  const contextWindow = optRecord(SPEC, payload, 'context_window', 'context_window');
  if (contextWindow === null) {
    // Claude Code 1.0.x (hook_event_name "Status") sent no context_window at all.
    unknown.push({ metric: 'context', reason: `context_window is ${missingWord(payload, 'context_window')} (Claude Code before 2.x sends none)` });
  } else {
    const used = optNumber(SPEC, contextWindow, 'used_percentage', 'context_window.used_percentage', PERCENT_RANGE);
    if (used === null) {
      unknown.push({
        metric: 'context',
        reason: `context_window.used_percentage is ${missingWord(contextWindow, 'used_percentage')} (not reported yet in this session)`,
      });
    } else {
      readings.push(reading(stamp, 'context', used, null));
    }
  }

  const rateLimits = optRecord(SPEC, payload, 'rate_limits', 'rate_limits');
  for (const { key, metric } of WINDOWS) {
    const outcome = readWindow(rateLimits, missingWord(payload, 'rate_limits'), key);
    if (typeof outcome === 'string') unknown.push({ metric, reason: outcome });
    else readings.push(reading(stamp, metric, outcome.used, outcome.resetsAt));
  }

  return result({ readings, unknown, route: { cwd, session_id: executor } });
}

/** The window's numbers, or the reason it has none. */
function readWindow(
  rateLimits: JsonRecord | null,
  rateLimitsMissing: string,
  key: string,
): { used: number; resetsAt: number | null } | string {
  if (rateLimits === null) {
    return `rate_limits is ${rateLimitsMissing} (Claude Code sends it only to subscribers, after the first API response)`;
  }
  const path = `rate_limits.${key}`;
  const window = optRecord(SPEC, rateLimits, key, path);
  if (window === null) return `${path} is ${missingWord(rateLimits, key)}`;
  const used = optNumber(SPEC, window, 'used_percentage', `${path}.used_percentage`, PERCENT_RANGE);
  if (used === null) return `${path}.used_percentage is ${missingWord(window, 'used_percentage')}`;
  const resetsAt = optNumber(SPEC, window, 'resets_at', `${path}.resets_at`, EPOCH_SECONDS_RANGE);
  return { used, resetsAt };
}
