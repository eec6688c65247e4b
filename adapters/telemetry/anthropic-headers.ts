import type { Metric, ProviderWarning, Reading } from '../../schemas/telemetry.schema.js';
import type { AdapterResult, ParseContext, UnknownMetric } from './adapter-contract.js';
import { bodyWarnings, HEADERS_HINT_SUFFIX, parseDecimal, parseHttpHeaders, retryAfterSeconds } from './http-headers.js';
import { usedPercentOfLimit } from './limit-ratio.js';
import { cleanPercent, reading, result, sha256Hex, warning, type Stamp } from './record-builders.js';
import type { ShapeSpec } from './shape.js';
import { parseRfc3339Seconds } from './time-formats.js';

const SPEC: ShapeSpec = {
  adapter: 'anthropic-headers',
  hint: `send ${HEADERS_HINT_SUFFIX}, from an Anthropic API response`,
};

const PREFIX = 'anthropic-ratelimit-';
/** Order breaks ties when two token limits are equally full: the specific limits name the cause. */
const TOKEN_FAMILIES = ['input-tokens', 'output-tokens', 'tokens'] as const;
const UNIFIED_WINDOWS: readonly { key: string; metric: Metric }[] = [
  { key: '5h', metric: 'five_hour' },
  { key: '7d', metric: 'seven_day' },
];
const UNIFIED_STATUS_HEADERS = ['unified-status', 'unified-5h-status', 'unified-7d-status'].map((name) => `${PREFIX}${name}`);
const NEAR_LIMIT_STATUSES: ReadonlySet<string> = new Set(['allowed_warning', 'rejected']);

type Family = { readonly reading: Reading } | { readonly reason: string };

/**
 * Anthropic response headers → requests, tokens, five_hour and seven_day. The undocumented
 * unified headers are read field by field: a bad field is unknown and the others still count.
 */
export function parseAnthropicHeaders(raw: string, ctx: ParseContext): AdapterResult {
  const { status, headers, body } = parseHttpHeaders(SPEC, raw);
  const stamp: Stamp = {
    source: 'anthropic-headers',
    observedAt: ctx.observedAt.toISOString(),
    rawSha256: sha256Hex(raw),
    executor: null,
  };
  const readings: Reading[] = [];
  const unknown: UnknownMetric[] = [];
  const keep = (metric: Metric, outcome: Family): void => {
    if ('reading' in outcome) readings.push(outcome.reading);
    else unknown.push({ metric, reason: outcome.reason });
  };

  keep('requests', countedFamily(stamp, headers, 'requests', 'requests'));
  keep('tokens', tightestTokenFamily(stamp, headers));
  for (const { key, metric } of UNIFIED_WINDOWS) keep(metric, unifiedWindow(stamp, headers, key, metric));

  const retryAfter = retryAfterSeconds(headers, ctx.observedAt);
  // The body tells a rate limit (lifts) from a spend cap (does not); it replaces the bare 429.
  const warnings: ProviderWarning[] = bodyWarnings('anthropic', body, stamp, retryAfter);
  const reasons: string[] = status === 429 && warnings.length === 0 ? ['HTTP 429 Too Many Requests'] : [];
  const statuses = UNIFIED_STATUS_HEADERS.map((name) => [name, headers.get(name)?.trim().toLowerCase() ?? ''] as const);
  const nearLimit = statuses.filter(([, value]) => NEAR_LIMIT_STATUSES.has(value));
  reasons.push(...nearLimit.map(([name]) => `${name}: ${headers.get(name)?.trim() ?? ''}`));
  if (reasons.length > 0) {
    // `rejected`: the subscription refuses requests now, and no waiting is promised. A bare 429 may be
    // a spend cap, which carries no retry-after and does not lift: recovery is then "not said".
    const rejected = nearLimit.some(([, value]) => value === 'rejected');
    const recovers = rejected ? false : retryAfter !== null || nearLimit.length > 0 ? true : null;
    warnings.push(warning(stamp, 'rate_limit', `Anthropic rate limit: ${reasons.join('; ')}`, recovers, rejected ? null : retryAfter));
  }
  return result({ readings, unknown, warnings });
}

function countedFamily(stamp: Stamp, headers: ReadonlyMap<string, string>, family: string, metric: Metric): Family {
  const base = `${PREFIX}${family}-`;
  if (!['limit', 'remaining', 'reset'].some((part) => headers.has(`${base}${part}`))) {
    return { reason: `no ${base}limit / ${base}remaining headers` };
  }
  const outcome = usedPercentOfLimit(headers, `${base}limit`, `${base}remaining`);
  if ('reason' in outcome) return outcome;
  const resetText = headers.get(`${base}reset`);
  const resetsAt = resetText === undefined ? null : parseRfc3339Seconds(resetText);
  return { reading: reading(stamp, metric, outcome.usedPercent, resetsAt) };
}

/**
 * A payload gives at most one reading per metric, and input-tokens, output-tokens and tokens all
 * map to `tokens`. The fullest one is kept: whichever limit runs out first stops the agent, and
 * pressure is a maximum anyway, so the others could only ever be lower.
 */
function tightestTokenFamily(stamp: Stamp, headers: ReadonlyMap<string, string>): Family {
  const outcomes = TOKEN_FAMILIES.map((family) => countedFamily(stamp, headers, family, 'tokens'));
  let best: Reading | null = null;
  for (const outcome of outcomes) {
    if (!('reading' in outcome)) continue;
    const used = outcome.reading.used_percent ?? 0;
    if (best === null || used > (best.used_percent ?? 0)) best = outcome.reading;
  }
  if (best !== null) return { reading: best };
  return { reason: outcomes.map((outcome) => ('reason' in outcome ? outcome.reason : '')).join('; ') };
}

/** Unified utilization is a FRACTION (0–1, can exceed 1), unlike every other percent here. */
function unifiedWindow(stamp: Stamp, headers: ReadonlyMap<string, string>, key: string, metric: Metric): Family {
  const name = `${PREFIX}unified-${key}-utilization`;
  const text = headers.get(name);
  if (text === undefined) return { reason: `${name} is missing (sent on subscription responses only)` };
  const fraction = parseDecimal(text);
  // 1000 (= 100 000 %) is the reading schema's ceiling; past it the header is not a fraction at all.
  if (fraction === null || fraction < 0 || fraction > 1000) {
    return { reason: `${name} is not a fraction: ${JSON.stringify(text)}` };
  }
  const resetSeconds = parseDecimal(headers.get(`${PREFIX}unified-${key}-reset`));
  const resetsAt = resetSeconds !== null && resetSeconds >= 0 && resetSeconds <= 1e11 ? resetSeconds : null;
  return { reading: reading(stamp, metric, cleanPercent(fraction * 100), resetsAt) };
}
