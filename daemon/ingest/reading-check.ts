import { isZeroPlaceholder, ZERO_PLACEHOLDER_REASON } from '../../adapters/telemetry/index.js';
import type { PressurePolicy } from '../../protocol/index.js';
import type { Reading } from '../../schemas/telemetry.schema.js';

/** What to do with a parsed reading before the machine sees it. */
export type ReadingCheck =
  | { readonly kind: 'dispatch' }
  /** Same numbers as the recorded reading, seen again shortly after: nothing to journal. */
  | { readonly kind: 'unchanged' }
  | { readonly kind: 'not_credible'; readonly reason: 'zero_placeholder'; readonly message: string };

/**
 * The longest a repeated identical reading is left unrecorded. Claude Code runs the status line after
 * every message and on a refresh interval; journaling each repeat would grow the journal by a full
 * snapshot per message while telling nothing new. Half the freshness window keeps the recorded
 * observation credible.
 */
const REFRESH_MS = 60_000;

export function refreshMs(policy: PressurePolicy): number {
  return Math.min(REFRESH_MS, (policy.freshness_seconds * 1000) / 2);
}

/**
 * Judges `next` against the reading the workspace holds for the same key. Pure: the caller passes the
 * previous reading and the policy. Credibility itself stays with the machine.
 */
export function checkReading(previous: Reading | undefined, next: Reading, policy: PressurePolicy): ReadingCheck {
  // Codex writes 0 % with shifted resets right after a real reading; across payloads too.
  if (isZeroPlaceholder(previous, next)) return { kind: 'not_credible', reason: 'zero_placeholder', message: ZERO_PLACEHOLDER_REASON };
  if (previous === undefined || previous.used_percent !== next.used_percent || previous.resets_at !== next.resets_at) return { kind: 'dispatch' };
  const age = Date.parse(next.observed_at) - Date.parse(previous.observed_at);
  return age >= 0 && age < refreshMs(policy) ? { kind: 'unchanged' } : { kind: 'dispatch' };
}
