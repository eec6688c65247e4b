import { parseDecimal } from './http-headers.js';
import { cleanPercent } from './record-builders.js';

/** Used percent of a counted limit, or why it cannot be read. */
export type RatioOutcome = { readonly usedPercent: number } | { readonly reason: string };

/**
 * 100 × (limit − remaining) / limit, from the two numbers the provider reported — the one
 * computation the telemetry rule allows, since both counts describe the same limit. A missing,
 * non-numeric, zero or negative limit (gateways send -1 or 0 for "no limit") is unknown, and so is
 * a remaining above the limit, which would give a negative use.
 */
export function usedPercentOfLimit(headers: ReadonlyMap<string, string>, limitName: string, remainingName: string): RatioOutcome {
  const limitText = headers.get(limitName);
  const remainingText = headers.get(remainingName);
  if (limitText === undefined) return { reason: `${limitName} is missing` };
  const limit = parseDecimal(limitText);
  if (limit === null) return { reason: `${limitName} is not a number: ${JSON.stringify(limitText)}` };
  if (limit <= 0) return { reason: `${limitName} is ${limit} (no usable limit reported)` };
  if (remainingText === undefined) return { reason: `${remainingName} is missing` };
  const remaining = parseDecimal(remainingText);
  if (remaining === null) return { reason: `${remainingName} is not a number: ${JSON.stringify(remainingText)}` };
  if (remaining < 0) return { reason: `${remainingName} is ${remaining} (no usable count reported)` };
  if (remaining > limit) return { reason: `${remainingName} ${remaining} exceeds ${limitName} ${limit}` };
  return { usedPercent: cleanPercent((100 * (limit - remaining)) / limit) };
}
