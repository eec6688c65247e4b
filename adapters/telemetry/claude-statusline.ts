import type { Metric, Reading } from '../../schemas/telemetry.schema.js';
import type { AdapterResult, ParseContext, UnknownMetric } from './adapter-contract.js';
import { reading, result, sha256Hex, type Stamp } from './record-builders.js';
import { EPOCH_SECONDS_RANGE, missingWord, numberField, parseJsonObject, PERCENT_RANGE, recordField, type JsonRecord, type ShapeSpec } from './shape.js';
import { contextPercent, statusLineRoute } from './status-line-payload.js';

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
 * The gateway's spend limit, `{used_percentage, resets_at, used_usd, limit_usd, period}`: its
 * percentage and reset are read like a window's. `used_usd` / `limit_usd` are never divided: a share
 * is a reading only when Claude Code reported it.
 */
const SPEND: { key: string; metric: Metric } = { key: 'spend_limit', metric: 'spend' };

/**
 * Claude Code status line → context, five_hour and seven_day (and spend, when a spend limit is sent), each either the number Claude Code
 * printed or an unknown entry. Token counts (`total_input_tokens`, `current_usage`) are never used:
 * before 2.1.132 `total_input_tokens` was cumulative, and any division would be our estimate.
 * Each metric is read on its own: a field of the wrong type makes its metric unknown, never the
 * payload (status-line tools met `"used_percentage": "9"` in the wild); plain numeric strings count.
 */
export function parseClaudeStatusline(raw: string, ctx: ParseContext): AdapterResult {
  const payload = parseJsonObject(SPEC, raw);
  const { executor, cwd } = statusLineRoute(payload);
  const stamp: Stamp = {
    source: 'claude-statusline',
    observedAt: ctx.observedAt.toISOString(),
    rawSha256: sha256Hex(raw),
    executor,
  };
  const readings: Reading[] = [];
  const unknown: UnknownMetric[] = [];

  const context = contextPercent(payload, 'used_percentage', {
    // Claude Code 1.0.x (hook_event_name "Status") sent no context_window at all.
    absent: 'Claude Code before 2.x sends none',
    unset: 'not reported yet in this session',
  });
  if (typeof context === 'number') readings.push(reading(stamp, 'context', context, null));
  else unknown.push(context);

  const rateLimits = recordField(payload, 'rate_limits', 'rate_limits');
  // A spend limit is set on some accounts only: its absence is no news, so it is read only when present.
  const spend = 'value' in rateLimits && rateLimits.value?.[SPEND.key] != null ? [SPEND] : [];
  for (const { key, metric } of [...WINDOWS, ...spend]) {
    const outcome = 'bad' in rateLimits ? rateLimits.bad : readWindow(rateLimits.value, missingWord(payload, 'rate_limits'), key);
    if (typeof outcome === 'string') unknown.push({ metric, reason: outcome });
    else readings.push(reading(stamp, metric, outcome.used, outcome.resetsAt));
  }

  return result({ readings, unknown, route: { cwd, session_id: executor } });
}

/** The window's numbers, or the reason it has none. */
function readWindow(rateLimits: JsonRecord | null, rateLimitsMissing: string, key: string): { used: number; resetsAt: number | null } | string {
  if (rateLimits === null) {
    return `rate_limits is ${rateLimitsMissing} (Claude Code sends it only to subscribers, after the first API response)`;
  }
  const path = `rate_limits.${key}`;
  const window = recordField(rateLimits, key, path);
  if ('bad' in window) return window.bad;
  if (window.value === null) return `${path} is ${missingWord(rateLimits, key)}`;
  const used = numberField(window.value, 'used_percentage', `${path}.used_percentage`, PERCENT_RANGE);
  if ('bad' in used) return used.bad;
  if (used.value === null) return `${path}.used_percentage is ${missingWord(window.value, 'used_percentage')}`;
  // A reset we cannot read would make a passed window look live: the window is then unknown.
  const resetsAt = numberField(window.value, 'resets_at', `${path}.resets_at`, EPOCH_SECONDS_RANGE);
  if ('bad' in resetsAt) return resetsAt.bad;
  return { used: used.value, resetsAt: resetsAt.value };
}
