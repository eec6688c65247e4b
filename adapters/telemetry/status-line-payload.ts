import type { UnknownMetric } from './adapter-contract.js';
import { EXECUTOR_MAX_LENGTH, lenientString, missingWord, numberField, PERCENT_RANGE, recordField, type JsonRecord } from './shape.js';

/** Who sent a status line payload and from where: Claude Code and Copilot CLI name both the same way. */
export function statusLineRoute(payload: JsonRecord): { executor: string | null; cwd: string | null } {
  const executor = lenientString(payload, 'session_id', EXECUTOR_MAX_LENGTH);
  const workspace = recordField(payload, 'workspace', 'workspace');
  const cwd = lenientString(payload, 'cwd') ?? lenientString('value' in workspace ? workspace.value : null, 'current_dir');
  return { executor, cwd };
}

/**
 * The context percentage the agent printed under `context_window.<key>`, or why there is none.
 * `absent` explains a missing `context_window`, `unset` a missing or null percentage.
 */
export function contextPercent(payload: JsonRecord, key: string, why: { absent: string; unset: string }): number | UnknownMetric {
  const contextWindow = recordField(payload, 'context_window', 'context_window');
  if ('bad' in contextWindow) return { metric: 'context', reason: contextWindow.bad };
  if (contextWindow.value === null) return { metric: 'context', reason: `context_window is ${missingWord(payload, 'context_window')} (${why.absent})` };
  const path = `context_window.${key}`;
  const used = numberField(contextWindow.value, key, path, PERCENT_RANGE);
  if ('bad' in used) return { metric: 'context', reason: used.bad };
  if (used.value === null) return { metric: 'context', reason: `${path} is ${missingWord(contextWindow.value, key)} (${why.unset})` };
  return used.value;
}
