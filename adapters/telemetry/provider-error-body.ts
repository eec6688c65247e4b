import type { ProviderWarning, Source } from '../../schemas/telemetry.schema.js';
import type { ParseContext } from './adapter-contract.js';
import { sha256Hex, warning, type Stamp } from './record-builders.js';
import { invalid, optRecord, optString, parseJsonObject, type JsonRecord, type ShapeSpec } from './shape.js';

export type Provider = 'anthropic' | 'openai';

/**
 * The error body travels with the headers of the same response, so its warnings carry that
 * adapter's source: the schema names sources by adapter, and there is no separate body adapter.
 */
const SOURCE: Readonly<Record<Provider, Source>> = { anthropic: 'anthropic-headers', openai: 'openai-headers' };

const SPECS: Readonly<Record<Provider, ShapeSpec>> = {
  anthropic: {
    adapter: 'anthropic-error-body',
    hint: 'send the JSON body of an Anthropic error response: {"type": "error", "error": {"type": …, "message": …}}',
  },
  openai: {
    adapter: 'openai-error-body',
    hint: 'send the JSON body of an OpenAI error response: {"error": {"message": …, "type": …, "code": …}}',
  },
};

/**
 * A 429 body says what the headers cannot: whether waiting helps. A rate limit lifts when its
 * window rolls over; a spend cap or an exhausted quota does not, however long the agent waits.
 * Bodies of other errors give no warning.
 */
export function parseProviderErrorBody(provider: Provider, raw: string, ctx: ParseContext): ProviderWarning[] {
  const stamp: Stamp = {
    source: SOURCE[provider],
    observedAt: ctx.observedAt.toISOString(),
    rawSha256: sha256Hex(raw),
    executor: null,
  };
  return errorBodyWarnings(provider, raw, stamp, null);
}

/**
 * The warnings of a body that came with headers (after their blank line, or alone), stamped as the
 * whole payload. `retryAfter` is the headers' retry-after, which the body never repeats.
 */
export function errorBodyWarnings(provider: Provider, raw: string, stamp: Stamp, retryAfter: number | null): ProviderWarning[] {
  const spec = SPECS[provider];
  const body = parseJsonObject(spec, raw);
  const error = optRecord(spec, body, 'error', 'error');
  if (error === null) throw invalid(spec, 'the body has no error object');
  const warnings = provider === 'anthropic' ? anthropicWarnings(spec, stamp, error) : openaiWarnings(spec, stamp, error);
  // A wait is said only for a warning that lifts by waiting.
  return warnings.map((w) => (w.recovers === true && retryAfter !== null ? { ...w, retry_after_seconds: retryAfter } : w));
}

function anthropicWarnings(spec: ShapeSpec, stamp: Stamp, error: JsonRecord): ProviderWarning[] {
  const type = optString(spec, error, 'type', 'error.type');
  if (type !== 'rate_limit_error') return [];
  const message = optString(spec, error, 'message', 'error.message') ?? 'Anthropic rate_limit_error';
  const details = optRecord(spec, error, 'details', 'error.details');
  const code = details === null ? null : optString(spec, details, 'error_code', 'error.details.error_code');
  if (code === 'enforced_spend_limit_reached') return [warning(stamp, 'spend_cap', message, false, null)];
  return [warning(stamp, 'rate_limit', message, true, null)];
}

function openaiWarnings(spec: ShapeSpec, stamp: Stamp, error: JsonRecord): ProviderWarning[] {
  const code = optString(spec, error, 'code', 'error.code');
  const type = optString(spec, error, 'type', 'error.type');
  const message = optString(spec, error, 'message', 'error.message');
  if (code === 'insufficient_quota' || type === 'insufficient_quota') {
    return [warning(stamp, 'insufficient_quota', message ?? 'OpenAI insufficient_quota', false, null)];
  }
  if (code === 'rate_limit_exceeded') {
    return [warning(stamp, 'rate_limit', message ?? 'OpenAI rate_limit_exceeded', true, null)];
  }
  return [];
}
