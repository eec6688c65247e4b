import type { Metric, ProviderWarning, Reading } from '../../schemas/telemetry.schema.js';
import type { AdapterResult, ParseContext, UnknownMetric } from './adapter-contract.js';
import { bodyWarnings, HEADERS_HINT_SUFFIX, parseHttpHeaders, retryAfterSeconds } from './http-headers.js';
import { usedPercentOfLimit } from './limit-ratio.js';
import { reading, result, sha256Hex, warning, type Stamp } from './record-builders.js';
import type { ShapeSpec } from './shape.js';
import { parseGoDurationMs } from './time-formats.js';

const SPEC: ShapeSpec = {
  adapter: 'openai-headers',
  hint: `send ${HEADERS_HINT_SUFFIX}, from an OpenAI API response`,
};

const FAMILIES: readonly { family: string; metric: Metric }[] = [
  { family: 'requests', metric: 'requests' },
  { family: 'tokens', metric: 'tokens' },
];

/**
 * OpenAI response headers → requests and tokens. Resets are durations (`6m0s`), so they are
 * anchored to the injected observation time: the payload carries no clock of its own.
 */
export function parseOpenaiHeaders(raw: string, ctx: ParseContext): AdapterResult {
  const { status, headers, body } = parseHttpHeaders(SPEC, raw);
  const stamp: Stamp = {
    source: 'openai-headers',
    observedAt: ctx.observedAt.toISOString(),
    rawSha256: sha256Hex(raw),
    executor: null,
  };
  const readings: Reading[] = [];
  const unknown: UnknownMetric[] = [];
  for (const { family, metric } of FAMILIES) {
    const outcome = usedPercentOfLimit(headers, `x-ratelimit-limit-${family}`, `x-ratelimit-remaining-${family}`);
    if ('reason' in outcome) {
      unknown.push({ metric, reason: outcome.reason });
      continue;
    }
    const durationText = headers.get(`x-ratelimit-reset-${family}`);
    const durationMs = durationText === undefined ? null : parseGoDurationMs(durationText);
    // In milliseconds first, so `12ms` gives exactly observedAt + 0.012 s.
    const resetsAt = durationMs === null ? null : (ctx.observedAt.getTime() + durationMs) / 1000;
    readings.push(reading(stamp, metric, outcome.usedPercent, resetsAt));
  }

  const retryAfter = retryAfterSeconds(headers, ctx.observedAt);
  // The body says what the headers cannot: rate_limit_exceeded lifts, insufficient_quota does not.
  const warnings: ProviderWarning[] = bodyWarnings('openai', body, stamp, retryAfter);
  if (status === 429 && warnings.length === 0) {
    // Without a readable body a 429 is either a rate limit (lifts) or insufficient_quota (does not):
    // recovery is said only when a retry-after says it.
    warnings.push(warning(stamp, 'rate_limit', 'OpenAI answered HTTP 429 Too Many Requests', retryAfter === null ? null : true, retryAfter));
  }
  return result({ readings, unknown, warnings });
}
