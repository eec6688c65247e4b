import { isHandoffError } from '../../protocol/errors.js';
import type { LimitFamily, Metric, ProviderWarning, Reading } from '../../schemas/telemetry.schema.js';
import type { AdapterResult, AgentEvent, ParseContext, PayloadRoute, SkippedLine, UnknownMetric } from './adapter-contract.js';
import { readCodexError } from './codex-errors.js';
import { describeSlot, limitFamily, readSlots, SLOTS, type WindowObservation } from './codex-rate-limits.js';
import { hookEvent } from './hook-event.js';
import { lineReason, readJsonLines, type JsonLine } from './jsonl.js';
import { agentEvent, reading, result, sha256Hex, type Stamp } from './record-builders.js';
import {
  describeType,
  EXECUTOR_MAX_LENGTH,
  invalid,
  lenientString,
  missingWord,
  optExecutor,
  numberField,
  optRecord,
  optString,
  type JsonRecord,
  type ShapeSpec,
} from './shape.js';
import { isZeroPlaceholder, ZERO_PLACEHOLDER_REASON } from './zero-placeholder.js';

const SPEC: ShapeSpec = {
  adapter: 'codex-rollout',
  hint:
    'send lines of a Codex rollout file (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl), one JSON object ' +
    '{timestamp, type, payload} a line; a Codex hook or notify payload is accepted as one such line',
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
const CONTEXT_DERIVED_REASON =
  'Codex reports token counts (info.last_token_usage) and info.model_context_window, ' +
  'not a percentage; a context percent would be derived from token counts';

/** Mid-2025 rollouts: a bare session header line and `record_type: "state"` lines, no token_count events. */
export const LEGACY_FORMAT_REASON = 'an older Codex format with no usage data (mid-2025 rollout: record_type "state" lines, no token_count events)';

/** Everything one payload taught us, accumulated line by line in file (= time) order. */
interface Accumulator {
  /** The latest reported number per window and limit family (`metric` or `metric/limit_id`). */
  readonly readings: Map<string, Reading>;
  /** Unknown reasons of the account family's windows. */
  readonly notes: Map<Metric, string>;
  readonly events: AgentEvent[];
  readonly warnings: ProviderWarning[];
  /** Turns whose usage-limit error is already a warning: Codex may write it as an error event and in task_complete. */
  readonly limitedTurns: Set<string>;
  readonly skipped: SkippedLine[];
  metaCwd: string | null;
  turnCwd: string | null;
  eventCwd: string | null;
  sessionId: string | null;
  eventSessionId: string | null;
  legacy: boolean;
}

const slotKey = (metric: Metric, limit: LimitFamily | undefined): string => (limit === undefined ? metric : `${metric}/${limit.id}`);

/**
 * Codex rollout JSONL → five_hour / weekly / monthly readings from `token_count` events, one per limit
 * family, the route from `session_meta`, and events from Codex hook and notify payloads (which carry no
 * numbers). A line that cannot be read is skipped and named; the other lines still count.
 */
export function parseCodexRollout(raw: string, ctx: ParseContext): AdapterResult {
  const rawSha256 = sha256Hex(raw);
  const parsed = readJsonLines(SPEC, raw);
  const acc: Accumulator = {
    readings: new Map(),
    notes: new Map(),
    events: [],
    warnings: [],
    limitedTurns: new Set(),
    skipped: [...parsed.skipped],
    metaCwd: null,
    turnCwd: null,
    eventCwd: null,
    sessionId: null,
    eventSessionId: null,
    legacy: false,
  };
  for (const line of parsed.lines) {
    try {
      readLine(acc, line, ctx, rawSha256);
    } catch (error) {
      if (!isHandoffError(error)) throw error;
      // The report names the line already: its number is not repeated in the reason.
      acc.skipped.push({ line: line.lineNumber, reason: lineReason(SPEC, error).replace(/^line \d+: /, '') });
    }
  }
  acc.skipped.sort((a, b) => a.line - b.line);
  if (parsed.lines.length === 0 && acc.skipped.length > 0) {
    // Nothing at all was readable: this is not a rollout, and saying so beats an empty report.
    const first = acc.skipped[0];
    throw invalid(SPEC, `no line could be read (line ${first?.line ?? 1}: ${first?.reason ?? ''})`);
  }
  // session_meta names the session for every reading of the file, wherever it sits in the payload.
  const executor = acc.sessionId ?? acc.eventSessionId;
  const readings = [...acc.readings.values()].map((r) => ({ ...r, executor }));
  if (acc.legacy && readings.length === 0) {
    for (const { metric } of EXPECTED_WINDOWS) acc.notes.set(metric, LEGACY_FORMAT_REASON);
  }
  const unknown: UnknownMetric[] = [...acc.notes].map(([metric, reason]) => ({ metric, reason }));
  return result({
    readings,
    unknown,
    warnings: acc.warnings.map((w) => ({ ...w, executor })),
    events: acc.events,
    route: { cwd: acc.metaCwd ?? acc.turnCwd ?? acc.eventCwd, session_id: executor },
    skipped: acc.skipped,
  });
}

function readLine(acc: Accumulator, line: JsonLine, ctx: ParseContext, rawSha256: string): void {
  const value = line.value;
  if (value['hook_event_name'] !== undefined) readHook(acc, line, ctx, rawSha256);
  else if (value['thread-id'] !== undefined) readNotify(acc, line, ctx, rawSha256);
  else if (isLegacyLine(value)) acc.legacy = true;
  else readRolloutLine(acc, line, ctx, rawSha256);
}

/**
 * The mid-2025 format: a first line `{id, timestamp, instructions, git?}` with no `type`, then
 * response items and `{"record_type": "state"}` lines. It never carried rate limits.
 */
function isLegacyLine(value: JsonRecord): boolean {
  if (value['record_type'] !== undefined) return true;
  return value['type'] === undefined && value['payload'] === undefined && typeof value['id'] === 'string' && typeof value['timestamp'] === 'string';
}

/** Absence of a number is noted only while no number is known for that account window in this payload. */
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
  } else if (payload['type'] === 'error' || payload['type'] === 'task_complete') {
    const timeMs = lineTime(line, ctx);
    const stamp: Stamp = { source: 'codex-rollout', observedAt: new Date(timeMs).toISOString(), rawSha256, executor: null };
    readCodexError(acc, payload, stamp, timeMs, ctx.observedAt.getTime(), acc.limitedTurns);
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
  const rateLimits = optRecord(SPEC, payload, 'rate_limits', `${at}payload.rate_limits`);
  const limit = rateLimits === null ? undefined : limitFamily(rateLimits);
  // A model's own limits say nothing about the account's windows or the context.
  const account = limit === undefined;
  if (account) readContext(acc, payload);
  if (rateLimits === null) {
    for (const { metric } of EXPECTED_WINDOWS) {
      noteUnknown(acc, metric, `token_count rate_limits is ${missingWord(payload, 'rate_limits')}`);
    }
    return;
  }
  const slots = readSlots(rateLimits, `${at}payload.rate_limits`, timeMs);
  const seen = new Set<Metric>();
  const skipped: string[] = [];
  const candidates = new Map<Metric, WindowObservation>();
  for (const slot of SLOTS) {
    const state = slots[slot];
    if (typeof state === 'string') continue;
    if ('bad' in state) {
      skipped.push(state.bad);
      continue;
    }
    if (state.metric === null) {
      skipped.push(state.problem ?? `${slot} window_minutes ${state.windowMinutes ?? 'absent'} matches no known window, skipped`);
      continue;
    }
    seen.add(state.metric);
    if (state.usedPercent === null) {
      if (account) noteUnknown(acc, state.metric, state.problem ?? `token_count ${slot}.used_percent is null`);
      continue;
    }
    // Two slots of one length should not happen; if they do, the fuller one is the binding limit.
    const other = candidates.get(state.metric);
    if (other === undefined || (other.usedPercent ?? 0) < state.usedPercent) candidates.set(state.metric, state);
  }
  for (const [metric, window] of candidates) {
    if (window.usedPercent === null) continue;
    const key = slotKey(metric, limit);
    const next: Reading = { ...reading(stamp, metric, window.usedPercent, window.resetsAt), ...(limit === undefined ? {} : { limit }) };
    if (isZeroPlaceholder(acc.readings.get(key), next)) {
      if (account) acc.notes.set(metric, ZERO_PLACEHOLDER_REASON);
    } else {
      acc.readings.set(key, next);
      if (account) acc.notes.delete(metric);
    }
  }
  if (!account) return;
  const held = SLOTS.map((slot) => describeSlot(slot, slots[slot])).join(', ');
  for (const { metric, label } of EXPECTED_WINDOWS) {
    if (seen.has(metric)) continue;
    noteUnknown(acc, metric, [`no ${label} window in token_count rate_limits (${held})`, ...skipped].join('; '));
  }
}

function readContext(acc: Accumulator, payload: JsonRecord): void {
  const info = payload['info'];
  if (info === undefined || info === null || typeof info !== 'object' || Array.isArray(info)) {
    noteUnknown(
      acc,
      'context',
      `token_count info is ${info === undefined || info === null ? missingWord(payload, 'info') : `not an object (${describeType(info)})`}`,
    );
    return;
  }
  const record = info as JsonRecord;
  // Context is never a reading here, so a mistyped window size only changes the reason given.
  const windowField = numberField(record, 'model_context_window', 'token_count info.model_context_window', { min: 0, max: 1e12 });
  const lastUsage = record['last_token_usage'];
  if ('bad' in windowField) {
    noteUnknown(acc, 'context', windowField.bad);
  } else if (windowField.value === null) {
    noteUnknown(acc, 'context', `token_count info.model_context_window is ${missingWord(record, 'model_context_window')}`);
  } else if (lastUsage === undefined || lastUsage === null) {
    noteUnknown(acc, 'context', `token_count info.last_token_usage is ${missingWord(record, 'last_token_usage')}`);
  } else {
    noteUnknown(acc, 'context', CONTEXT_DERIVED_REASON);
  }
}

/**
 * The route a run of rollout lines names (session_meta's cwd and id, else turn_context's cwd), read
 * without the rest of the parse: the tail keeps a file's route apart from its batches, so a batch the
 * daemon refuses can never take the file's working directory with it.
 */
export function rolloutRoute(text: string): PayloadRoute {
  let metaCwd: string | null = null;
  let turnCwd: string | null = null;
  let sessionId: string | null = null;
  for (const line of text.split('\n')) {
    if (!line.includes('"session_meta"') && !line.includes('"turn_context"')) continue;
    const parsed = readJsonLines(SPEC, line).lines[0];
    const payload = parsed?.value['payload'];
    if (parsed === undefined || typeof payload !== 'object' || payload === null || Array.isArray(payload)) continue;
    const fields = payload as JsonRecord;
    if (parsed.value['type'] === 'session_meta') {
      metaCwd ??= lenientString(fields, 'cwd');
      sessionId ??= lenientString(fields, 'id', EXECUTOR_MAX_LENGTH);
    } else if (parsed.value['type'] === 'turn_context') {
      turnCwd ??= lenientString(fields, 'cwd');
    }
  }
  return { cwd: metaCwd ?? turnCwd, session_id: sessionId };
}
