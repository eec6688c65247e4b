import type { ProviderWarning, Source } from '../../schemas/telemetry.schema.js';
import type { AdapterResult, AgentEvent, ParseContext, SkippedLine, UnknownMetric } from './adapter-contract.js';
import { splitJsonObjects } from './json-stream.js';
import { agentEvent, RECENT_ERROR_MS, result, sha256Hex, warning, type Stamp } from './record-builders.js';
import { EXECUTOR_MAX_LENGTH, invalid, isRecord, lenientString, type JsonRecord, type ShapeSpec } from './shape.js';

const SPEC: ShapeSpec = {
  adapter: 'gemini-telemetry',
  hint:
    "send Gemini CLI's local telemetry log (the file `telemetry.outfile` names, e.g. .gemini/telemetry.log) " +
    'or one of its session files (~/.gemini/tmp/<project>/chats/session-*.jsonl; session-*.json in older releases)',
};

/** The telemetry log and the session files keep every error ever written: only recent ones warn. */
export { RECENT_ERROR_MS };

/**
 * Gemini CLI writes token counts (`gemini_cli.api_response`, `gemini_cli.token.usage`) and no quota,
 * no limit and no window size: a percentage could only be our derivation, which the telemetry rule
 * forbids. Every metric stays unknown; only quota errors become warnings.
 */
const noPercentReason = (agent: string): string =>
  `${agent} reports token counts, never a quota percentage or a window size; a percentage would be derived from token counts`;

/**
 * Quota exhaustion that waiting does not fix: a daily quota, or Gemini CLI's own terminal quota error.
 * Gemini CLI 0.61 logs the API's raw error (`error.type` "ApiError") before it classifies it, so the
 * daily quota is named only by the `quotaId` of a QuotaFailure violation inside the error text
 * (e.g. "GenerateRequestsPerDayPerProjectPerModel-FreeTier"): the same test Gemini CLI's
 * `classifyGoogleError` applies (`PerDay` or `Daily` in the quotaId).
 */
const TERMINAL_QUOTA = /TerminalQuotaError|per day|daily (?:quota|limit)|exhausted your (?:daily )?quota|"quotaId"\s*:\s*"[^"]*(?:PerDay|Daily)/i;
/** What a quota or rate-limit error says in its text when the status code is not a field of its own. */
const QUOTA_TEXT = /\b429\b|RESOURCE_EXHAUSTED|quota exceeded|rate limit/i;

/** Lifecycle events worth a log line (they carry no numbers), after the agent's event-name prefix. */
const EVENT_NAMES: ReadonlyMap<string, string> = new Map([
  ['chat_compression', 'chat_compression'],
  ['flash_fallback', 'flash_fallback'],
  ['api_error', 'api_error'],
]);

/**
 * Which agent wrote the log. Qwen Code is a fork of Gemini CLI and keeps its file exporter: the same
 * records, its events named `qwen-code.*` (`qwen-code.api_error` with `status_code` and `error.message`).
 */
interface LogDialect {
  readonly source: Source;
  readonly prefix: string;
  readonly agent: string;
  readonly spec: ShapeSpec;
}

const GEMINI: LogDialect = { source: 'gemini-telemetry', prefix: 'gemini_cli.', agent: 'Gemini CLI', spec: SPEC };
const QWEN: LogDialect = {
  source: 'qwen-telemetry',
  prefix: 'qwen-code.',
  agent: 'Qwen Code',
  spec: {
    adapter: 'qwen-telemetry',
    hint: "send Qwen Code's local telemetry log (the file `telemetry.outfile` in ~/.qwen/settings.json names)",
  },
};

interface Found {
  readonly dialect: LogDialect;
  readonly warnings: ProviderWarning[];
  readonly events: AgentEvent[];
  /** Session message ids already read: JSONL sessions repeat a message when it is updated or `$set` again. */
  readonly messageIds: Set<string>;
  sessionId: string | null;
}

/**
 * Gemini CLI → provider warnings. Reads the local telemetry log (OpenTelemetry log records as the
 * file exporter writes them, pretty-printed one after another, or the collector's OTLP JSON with
 * `resourceLogs`) and session files (`messages` of type `error`). A `gemini_cli.api_error` with
 * status 429, or an error message that names a quota, is a warning; nothing else is read.
 */
export const parseGeminiTelemetry = (raw: string, ctx: ParseContext): AdapterResult => parseTelemetryLog(GEMINI, raw, ctx);

/** Qwen Code's telemetry log: Gemini CLI's records under its own event names (see LogDialect). */
export const parseQwenTelemetry = (raw: string, ctx: ParseContext): AdapterResult => parseTelemetryLog(QWEN, raw, ctx);

function parseTelemetryLog(dialect: LogDialect, raw: string, ctx: ParseContext): AdapterResult {
  const rawSha256 = sha256Hex(raw);
  const { values, skipped } = splitJsonObjects(raw);
  const found: Found = { dialect, warnings: [], events: [], messageIds: new Set(), sessionId: null };
  const allSkipped: SkippedLine[] = [...skipped];
  for (const value of values) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value.text) as unknown;
    } catch (error) {
      allSkipped.push({ line: value.line, reason: `not valid JSON (${error instanceof Error ? error.message : String(error)})` });
      continue;
    }
    if (!isRecord(parsed)) continue;
    if (Array.isArray(parsed['resourceLogs'])) readOtlp(found, parsed, ctx, rawSha256);
    else if (isSessionRecord(parsed)) readSessionRecord(found, parsed, ctx, rawSha256);
    else readRecord(found, plainAttributes(parsed), recordTimeMs(parsed), ctx, rawSha256);
  }
  if (values.length === 0 && allSkipped.length > 0) throw invalid(dialect.spec, `no JSON object in the payload (line ${allSkipped[0]?.line ?? 1})`);
  const unknown: UnknownMetric[] = [
    { metric: 'context', reason: noPercentReason(dialect.agent) },
    { metric: 'tokens', reason: noPercentReason(dialect.agent) },
  ];
  return result({
    unknown,
    warnings: found.warnings,
    events: found.events,
    route: { cwd: null, session_id: found.sessionId },
    skipped: allSkipped.sort((a, b) => a.line - b.line),
  });
}

/** The file exporter serialises the SDK's record: `attributes` is a plain object. */
function plainAttributes(record: JsonRecord): JsonRecord {
  return isRecord(record['attributes']) ? record['attributes'] : {};
}

/** `hrTime` is [seconds, nanoseconds]; `event.timestamp` (ISO) is set by Gemini CLI on every event. */
function recordTimeMs(record: JsonRecord): number | null {
  const hrTime = record['hrTime'];
  if (Array.isArray(hrTime) && typeof hrTime[0] === 'number' && typeof hrTime[1] === 'number') return hrTime[0] * 1000 + hrTime[1] / 1e6;
  return null;
}

/** The collector's OTLP JSON: attributes are `[{key, value: {stringValue | intValue | …}}]`. */
function readOtlp(found: Found, doc: JsonRecord, ctx: ParseContext, rawSha256: string): void {
  for (const resourceLog of asRecords(doc['resourceLogs'])) {
    for (const scopeLog of asRecords(resourceLog['scopeLogs'])) {
      for (const logRecord of asRecords(scopeLog['logRecords'])) {
        const attributes: JsonRecord = {};
        for (const entry of asRecords(logRecord['attributes'])) {
          const key = entry['key'];
          const value = isRecord(entry['value']) ? Object.values(entry['value'])[0] : undefined;
          if (typeof key === 'string') attributes[key] = value;
        }
        const nanos = Number(logRecord['timeUnixNano']);
        readRecord(found, attributes, Number.isFinite(nanos) && nanos > 0 ? nanos / 1e6 : null, ctx, rawSha256);
      }
    }
  }
}

function asRecords(value: unknown): JsonRecord[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

function readRecord(found: Found, attributes: JsonRecord, timeMs: number | null, ctx: ParseContext, rawSha256: string): void {
  const { dialect } = found;
  const name = lenientString(attributes, 'event.name');
  const eventName = name?.startsWith(dialect.prefix) === true ? EVENT_NAMES.get(name.slice(dialect.prefix.length)) : undefined;
  if (eventName === undefined) return;
  const sessionId = lenientString(attributes, 'session.id', EXECUTOR_MAX_LENGTH);
  found.sessionId ??= sessionId;
  const at = eventTimeMs(attributes['event.timestamp'], timeMs, ctx);
  const stamp: Stamp = { source: dialect.source, observedAt: new Date(at).toISOString(), rawSha256, executor: sessionId };
  const status = statusCode(attributes['status_code'] ?? attributes['http.status_code']);
  const error = lenientString(attributes, 'error') ?? lenientString(attributes, 'error.message') ?? '';
  const errorType = lenientString(attributes, 'error_type') ?? lenientString(attributes, 'error.type') ?? '';
  const quota = eventName === 'api_error' && (status === 429 || (status === null && QUOTA_TEXT.test(error)));
  found.events.push(
    agentEvent(stamp, eventName, eventName === 'api_error' ? { status_code: status === null ? null : String(status), error_type: errorType || null } : {}),
  );
  if (!quota || !isRecent(at, ctx)) return;
  const model = lenientString(attributes, 'model');
  const text = `${dialect.agent} API error ${status ?? ''}${model === null ? '' : ` for ${model}`}: ${error || errorType || 'quota or rate limit'}`.replace(
    / {2,}/g,
    ' ',
  );
  found.warnings.push(quotaWarning(stamp, text, `${errorType} ${error}`));
}

/**
 * Session files, in both formats of gemini-cli's ChatRecordingService. Up to 0.5x one JSON document
 * `{sessionId, projectHash, startTime, lastUpdated, messages: [...]}`; since then `session-*.jsonl`, one
 * record a line: the metadata first (`sessionId`, `projectHash`, …), then each message as it is written
 * (`{id, timestamp, type, content}`, written again under the same id when it changes), `{"$set": {…}}`
 * updating metadata (its `messages`, when present, replaces the whole list) and `{"$rewindTo": id}`
 * dropping the messages from that id on. Only error messages matter here, each read once by its id.
 */
function isSessionRecord(record: JsonRecord): boolean {
  if (record['attributes'] !== undefined || record['hrTime'] !== undefined) return false;
  if (isRecord(record['$set']) || typeof record['$rewindTo'] === 'string') return true;
  if (typeof record['sessionId'] === 'string' && typeof record['projectHash'] === 'string') return true;
  return typeof record['id'] === 'string' && typeof record['type'] === 'string';
}

function readSessionRecord(found: Found, record: JsonRecord, ctx: ParseContext, rawSha256: string): void {
  const sessionId = lenientString(record, 'sessionId', EXECUTOR_MAX_LENGTH);
  found.sessionId ??= sessionId;
  const update = isRecord(record['$set']) ? record['$set'] : null;
  // A rewind removes messages from the conversation, not the fact that the API refused a request.
  const messages = update !== null ? update['messages'] : record['messages'];
  if (Array.isArray(messages)) for (const message of messages.filter(isRecord)) readSessionMessage(found, message, ctx, rawSha256);
  else if (update === null && typeof record['id'] === 'string') readSessionMessage(found, record, ctx, rawSha256);
}

/** One message `{id, timestamp, type: "user" | "gemini" | "info" | "error", content}`; content is text or `[{text}]` parts. */
function readSessionMessage(found: Found, message: JsonRecord, ctx: ParseContext, rawSha256: string): void {
  if (message['type'] !== 'error') return;
  const id = lenientString(message, 'id');
  if (id !== null) {
    if (found.messageIds.has(id)) return;
    found.messageIds.add(id);
  }
  const content = messageText(message['content']);
  if (!QUOTA_TEXT.test(content)) return;
  const at = eventTimeMs(message['timestamp'], null, ctx);
  const stamp: Stamp = { source: found.dialect.source, observedAt: new Date(at).toISOString(), rawSha256, executor: found.sessionId };
  found.events.push(agentEvent(stamp, 'quota_error', { id }));
  if (isRecent(at, ctx)) found.warnings.push(quotaWarning(stamp, `${found.dialect.agent} session error: ${content}`, content));
}

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(isRecord)
    .map((part) => (typeof part['text'] === 'string' ? part['text'] : ''))
    .join('');
}

function quotaWarning(stamp: Stamp, text: string, evidence: string): ProviderWarning {
  // A daily quota does not lift by waiting minutes; a per-minute rate limit might: Gemini CLI says neither.
  return TERMINAL_QUOTA.test(evidence) ? warning(stamp, 'insufficient_quota', text, false, null) : warning(stamp, 'rate_limit', text, null, null);
}

function statusCode(value: unknown): number | null {
  const number = typeof value === 'string' && /^\d{3}$/.test(value.trim()) ? Number(value) : value;
  return typeof number === 'number' && Number.isInteger(number) ? number : null;
}

/** The record's own time when it has one that parses; else the observation time. */
function eventTimeMs(timestamp: unknown, fallbackMs: number | null, ctx: ParseContext): number {
  const parsed = typeof timestamp === 'string' ? Date.parse(timestamp) : Number.NaN;
  if (isDateMs(parsed)) return parsed;
  return fallbackMs !== null && isDateMs(fallbackMs) ? fallbackMs : ctx.observedAt.getTime();
}

/** A time a Date can hold (±8.64e15 ms): past it `toISOString` throws. */
function isDateMs(ms: number): boolean {
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15;
}

function isRecent(atMs: number, ctx: ParseContext): boolean {
  return ctx.observedAt.getTime() - atMs <= RECENT_ERROR_MS;
}
