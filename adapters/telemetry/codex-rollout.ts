import type { Metric, Reading } from '../../schemas/telemetry.schema.js';
import type { AdapterResult, AgentEvent, ParseContext, UnknownMetric } from './adapter-result.js';
import { describeSlot, readSlots, SLOTS, type WindowObservation } from './codex-rate-limits.js';
import { hookEvent } from './hook-event.js';
import { parseJsonLines, type JsonLine } from './jsonl.js';
import { agentEvent, reading, result, sha256Hex, type Stamp } from './result.js';
import {
  describeType,
  invalid,
  missingWord,
  optExecutor,
  optNumber,
  optRecord,
  optString,
  type JsonRecord,
  type ShapeSpec,
} from './shape.js';
import { isZeroPlaceholder, ZERO_PLACEHOLDER_REASON } from './zero-placeholder.js';

const SPEC: ShapeSpec = {
  adapter: 'codex-rollout',
  hint: 'send lines of a Codex rollout file (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl), one JSON object '
    + '{timestamp, type, payload} a line; a Codex hook or notify payload is accepted as one such line',
};

/** The windows every Codex account has had so far; their absence from a token_count is worth saying. */
const EXPECTED_WINDOWS: readonly { metric: Metric; label: string }[] = [
  { metric: 'five_hour', label: '300-minute (5 h)' },
  { metric: 'weekly', label: '10080-minute (weekly)' },
];

/**
 * Why Codex context is never a reading: `info.last_token_usage` holds token counts and
 * `info.model_context_window` a window size. Codex writes no percentage; its own UI derives one
 * (with a baseline it subtracts), so any percent here would be our derivation from token counts,
 * which the telemetry rule forbids. The payload is still honest about context, so it is unknown.
 */
const CONTEXT_DERIVED_REASON = 'Codex reports token counts (info.last_token_usage) and info.model_context_window, '
  + 'not a percentage; a context percent would be derived from token counts';

/** Everything one payload taught us, accumulated line by line in file (= time) order. */
interface Accumulator {
  /** The latest reported number per window: a payload gives at most one reading per metric. */
  readonly readings: Map<Metric, Reading>;
  readonly notes: Map<Metric, string>;
  readonly events: AgentEvent[];
  metaCwd: string | null;
  turnCwd: string | null;
  eventCwd: string | null;
  sessionId: string | null;
  eventSessionId: string | null;
}

/**
 * Codex rollout JSONL → five_hour / weekly / monthly readings from `token_count` events, the
 * route from `session_meta`, and events from Codex hook and notify payloads (which carry no numbers).
 */
export function parseCodexRollout(raw: string, ctx: ParseContext): AdapterResult {
  const rawSha256 = sha256Hex(raw);
  const acc: Accumulator = {
    readings: new Map(),
    notes: new Map(),
    events: [],
    metaCwd: null,
    turnCwd: null,
    eventCwd: null,
    sessionId: null,
    eventSessionId: null,
  };
  for (const line of parseJsonLines(SPEC, raw)) {
    const value = line.value;
    if (value['hook_event_name'] !== undefined) readHook(acc, line, ctx, rawSha256);
    else if (value['thread-id'] !== undefined) readNotify(acc, line, ctx, rawSha256);
    else readRolloutLine(acc, line, ctx, rawSha256);
  }
  // session_meta names the session for every reading of the file, wherever it sits in the payload.
  const executor = acc.sessionId ?? acc.eventSessionId;
  const readings = [...acc.readings.values()].map((r) => ({ ...r, executor }));
  const unknown: UnknownMetric[] = [...acc.notes].map(([metric, reason]) => ({ metric, reason }));
  return result({
    readings,
    unknown,
    events: acc.events,
    route: { cwd: acc.metaCwd ?? acc.turnCwd ?? acc.eventCwd, session_id: executor },
  });
}

/** Absence of a number is noted only while no number is known for that window in this payload. */
function noteUnknown(acc: Accumulator, metric: Metric, reason: string): void {
  if (!acc.readings.has(metric)) acc.notes.set(metric, reason);
}

function readHook(acc: Accumulator, line: JsonLine, ctx: ParseContext, rawSha256: string): void {
  const at = `line ${line.lineNumber}: `;
  const name = line.value['hook_event_name'];
  if (typeof name !== 'string' || name === '') {
    throw invalid(SPEC, `${at}hook_event_name must be a non-empty string, got ${describeType(name)}`);
  }
  const sessionId = optExecutor(SPEC, line.value, 'session_id', `${at}session_id`);
  const stamp: Stamp = { source: 'codex-rollout', observedAt: ctx.observedAt.toISOString(), rawSha256, executor: sessionId };
  acc.events.push(hookEvent(SPEC, stamp, line.value, name, at));
  acc.eventCwd = optString(SPEC, line.value, 'cwd', `${at}cwd`) ?? acc.eventCwd;
  acc.eventSessionId = sessionId ?? acc.eventSessionId;
}

/** Codex `notify` program payload, e.g. {"type": "agent-turn-complete", "thread-id": …}. */
function readNotify(acc: Accumulator, line: JsonLine, ctx: ParseContext, rawSha256: string): void {
  const at = `line ${line.lineNumber}: `;
  const name = optString(SPEC, line.value, 'type', `${at}type`);
  if (name === null || name === '') throw invalid(SPEC, `${at}a notify payload needs a non-empty type`);
  const threadId = optExecutor(SPEC, line.value, 'thread-id', `${at}thread-id`);
  const stamp: Stamp = { source: 'codex-rollout', observedAt: ctx.observedAt.toISOString(), rawSha256, executor: threadId };
  acc.events.push(agentEvent(stamp, name, { 'turn-id': optString(SPEC, line.value, 'turn-id', `${at}turn-id`) }));
  acc.eventCwd = optString(SPEC, line.value, 'cwd', `${at}cwd`) ?? acc.eventCwd;
  acc.eventSessionId = threadId ?? acc.eventSessionId;
}

function readRolloutLine(acc: Accumulator, line: JsonLine, ctx: ParseContext, rawSha256: string): void {
  const at = `line ${line.lineNumber}: `;
  const type = line.value['type'];
  if (typeof type !== 'string') throw invalid(SPEC, `${at}type must be a string, got ${describeType(type)}`);
  // Other line types (response_item, compacted, …) hold conversation content, not telemetry.
  if (type !== 'session_meta' && type !== 'turn_context' && type !== 'event_msg') return;
  const payload = optRecord(SPEC, line.value, 'payload', `${at}payload`);
  if (payload === null) throw invalid(SPEC, `${at}a ${type} line needs a payload object`);
  if (type === 'session_meta') {
    acc.metaCwd = optString(SPEC, payload, 'cwd', `${at}payload.cwd`) ?? acc.metaCwd;
    acc.sessionId = optExecutor(SPEC, payload, 'id', `${at}payload.id`) ?? acc.sessionId;
  } else if (type === 'turn_context') {
    acc.turnCwd = optString(SPEC, payload, 'cwd', `${at}payload.cwd`) ?? acc.turnCwd;
  } else if (payload['type'] === 'token_count') {
    const timeMs = lineTime(line, ctx);
    const stamp: Stamp = { source: 'codex-rollout', observedAt: new Date(timeMs).toISOString(), rawSha256, executor: null };
    readTokenCount(acc, payload, stamp, timeMs, at);
  }
}

/** The line's own `timestamp` when it has one: a rollout line may be read long after it was written. */
function lineTime(line: JsonLine, ctx: ParseContext): number {
  const at = `line ${line.lineNumber}: `;
  const timestamp = optString(SPEC, line.value, 'timestamp', `${at}timestamp`);
  if (timestamp === null) return ctx.observedAt.getTime();
  const ms = Date.parse(timestamp);
  if (!Number.isFinite(ms)) throw invalid(SPEC, `${at}timestamp is not an ISO 8601 time: ${JSON.stringify(timestamp)}`);
  return ms;
}

function readTokenCount(acc: Accumulator, payload: JsonRecord, stamp: Stamp, timeMs: number, at: string): void {
  readContext(acc, payload, at);
  const rateLimits = optRecord(SPEC, payload, 'rate_limits', `${at}payload.rate_limits`);
  if (rateLimits === null) {
    for (const { metric } of EXPECTED_WINDOWS) {
      noteUnknown(acc, metric, `token_count rate_limits is ${missingWord(payload, 'rate_limits')}`);
    }
    return;
  }
  const slots = readSlots(SPEC, rateLimits, `${at}payload.rate_limits`, timeMs);
  const seen = new Set<Metric>();
  const skipped: string[] = [];
  const candidates = new Map<Metric, WindowObservation>();
  for (const slot of SLOTS) {
    const state = slots[slot];
    if (typeof state === 'string') continue;
    if (state.metric === null) {
      skipped.push(`${slot} window_minutes ${state.windowMinutes ?? 'absent'} matches no known window, skipped`);
      continue;
    }
    seen.add(state.metric);
    if (state.usedPercent === null) {
      noteUnknown(acc, state.metric, `token_count ${slot}.used_percent is null`);
      continue;
    }
    // Two slots of one length should not happen; if they do, the fuller one is the binding limit.
    const other = candidates.get(state.metric);
    if (other === undefined || (other.usedPercent ?? 0) < state.usedPercent) candidates.set(state.metric, state);
  }
  for (const [metric, window] of candidates) {
    if (window.usedPercent === null) continue;
    const next = reading(stamp, metric, window.usedPercent, window.resetsAt);
    if (isZeroPlaceholder(acc.readings.get(metric), next)) {
      acc.notes.set(metric, ZERO_PLACEHOLDER_REASON);
    } else {
      acc.readings.set(metric, next);
      acc.notes.delete(metric);
    }
  }
  const held = SLOTS.map((slot) => describeSlot(slot, slots[slot])).join(', ');
  for (const { metric, label } of EXPECTED_WINDOWS) {
    if (seen.has(metric)) continue;
    noteUnknown(acc, metric, [`no ${label} window in token_count rate_limits (${held})`, ...skipped].join('; '));
  }
}

function readContext(acc: Accumulator, payload: JsonRecord, at: string): void {
  const info = optRecord(SPEC, payload, 'info', `${at}payload.info`);
  if (info === null) {
    noteUnknown(acc, 'context', `token_count info is ${missingWord(payload, 'info')}`);
    return;
  }
  const window = optNumber(SPEC, info, 'model_context_window', `${at}payload.info.model_context_window`, { min: 0, max: 1e12 });
  const lastUsage = optRecord(SPEC, info, 'last_token_usage', `${at}payload.info.last_token_usage`);
  if (window === null) {
    noteUnknown(acc, 'context', `token_count info.model_context_window is ${missingWord(info, 'model_context_window')}`);
  } else if (lastUsage === null) {
    noteUnknown(acc, 'context', `token_count info.last_token_usage is ${missingWord(info, 'last_token_usage')}`);
  } else {
    noteUnknown(acc, 'context', CONTEXT_DERIVED_REASON);
  }
}
