import type { Reading, Source } from '../../schemas/telemetry.schema.js';
import type { AdapterResult, ParseContext, UnknownMetric } from './adapter-contract.js';
import { reading, result, sha256Hex, type Stamp } from './record-builders.js';
import {
  EXECUTOR_MAX_LENGTH,
  isRecord,
  lenientString,
  missingWord,
  numberField,
  parseJsonObject,
  PERCENT_RANGE,
  recordField,
  type JsonRecord,
  type ShapeSpec,
} from './shape.js';

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

/** What one agent's status line payload holds: the context share it computed, and the counts that say it has not counted yet. */
export interface AgentStatusLine {
  readonly source: Source;
  readonly agent: string;
  /** The key under `context_window` of the agent's own percentage. */
  readonly key: string;
  readonly why: { readonly absent: string; readonly unset: string };
  /**
   * Counts under `context_window` that are 0 while the agent has nothing to divide: the percentage it
   * sends beside them then is a 0 standing in for "not known", not a reading.
   */
  readonly placeholderWhenZero: readonly { readonly key: string; readonly meaning: string }[];
}

/**
 * A status line payload of an agent that reports only its context share (Copilot CLI, Qwen Code):
 * that share as the agent printed it, or why there is none. Token counts are never divided.
 */
export function parseAgentStatusLine(spec: AgentStatusLine, raw: string, ctx: ParseContext): AdapterResult {
  const shape: ShapeSpec = { adapter: spec.source, hint: `send the one JSON object ${spec.agent} writes to a status line command on stdin` };
  const payload = parseJsonObject(shape, raw);
  const { executor, cwd } = statusLineRoute(payload);
  const stamp: Stamp = { source: spec.source, observedAt: ctx.observedAt.toISOString(), rawSha256: sha256Hex(raw), executor };
  const readings: Reading[] = [];
  const unknown: UnknownMetric[] = [];
  const context = contextPercent(payload, spec.key, spec.why);
  const window = payload['context_window'];
  const zero = isRecord(window) ? spec.placeholderWhenZero.find((count) => window[count.key] === 0) : undefined;
  if (typeof context !== 'number') unknown.push(context);
  else if (zero !== undefined) unknown.push({ metric: 'context', reason: `context_window.${zero.key} is 0: ${zero.meaning}` });
  else readings.push(reading(stamp, 'context', context, null));
  return result({ readings, unknown, route: { cwd, session_id: executor } });
}
