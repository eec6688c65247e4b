import type { AgentEvent } from './adapter-contract.js';
import { agentEvent, type Stamp } from './record-builders.js';
import { optString, type JsonRecord, type ShapeSpec } from './shape.js';

/**
 * Which fields of a hook payload an event keeps. Claude Code and Codex share the hook vocabulary.
 * Prompts, messages and summaries are left out on purpose: they can be long and private, and the
 * daemon only needs to know what happened. A Map, not an object literal, so a hook named
 * `constructor` cannot pick up prototype keys.
 */
const DETAIL_FIELDS: ReadonlyMap<string, readonly string[]> = new Map([
  ['SessionStart', ['source']],
  ['PreCompact', ['trigger']],
  ['PostCompact', ['trigger']],
  ['SessionEnd', ['reason']],
  ['StopFailure', ['error', 'error_details']],
  ['Notification', ['notification_type']],
]);

/** One event from a hook payload; unlisted event names pass through with an empty detail. */
export function hookEvent(spec: ShapeSpec, stamp: Stamp, payload: JsonRecord, name: string, path: string): AgentEvent {
  const detail: Record<string, string | null> = {};
  for (const field of DETAIL_FIELDS.get(name) ?? []) {
    detail[field] = optString(spec, payload, field, `${path}${field}`);
  }
  return agentEvent(stamp, name, detail);
}
