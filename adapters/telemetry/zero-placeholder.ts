import type { Reading } from '../../schemas/telemetry.schema.js';

export const ZERO_PLACEHOLDER_REASON = 'zero placeholder before the earlier window reset';

/**
 * Codex has been seen writing 0 % with shifted reset times right after a real reading. Usage in a
 * window only grows until the window resets, so a drop to 0 before the earlier reading's reset is
 * not evidence that pressure went away; letting it through would lower pressure on a placeholder.
 *
 * Same window = same source, metric and limit family (Claude's five_hour and Codex's five_hour are different
 * accounts). Without an earlier reset time we cannot say the drop came early, so it counts as real.
 * Pure: the daemon applies it across payloads with the reading it stored last.
 */
export function isZeroPlaceholder(previous: Reading | undefined, next: Reading): boolean {
  if (previous === undefined) return false;
  if (previous.source !== next.source || previous.metric !== next.metric) return false;
  // A Codex per-model family's window is not the account's.
  if (previous.limit?.id !== next.limit?.id) return false;
  if (next.used_percent !== 0) return false;
  if (previous.used_percent === null || previous.used_percent <= 0) return false;
  if (previous.resets_at === null) return false;
  const nextObservedSeconds = Date.parse(next.observed_at) / 1000;
  return Number.isFinite(nextObservedSeconds) && nextObservedSeconds < previous.resets_at;
}
