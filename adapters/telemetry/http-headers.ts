import { isHandoffError } from '../../protocol/errors.js';
import type { ProviderWarning } from '../../schemas/telemetry.schema.js';
import { errorBodyWarnings, type Provider } from './provider-error-body.js';
import type { Stamp } from './record-builders.js';
import { describeType, invalid, isRecord, parseJson, type ShapeSpec } from './shape.js';

export interface HttpHeaders {
  /** The status of the final response, when the input had a status line (or a ':status' key). */
  readonly status: number | null;
  /** Lower-cased names: HTTP header names are case-insensitive. */
  readonly headers: ReadonlyMap<string, string>;
  /** The response body after the blank line (or the whole input when it is a body alone), or null. */
  readonly body: string | null;
}

export const HEADERS_HINT_SUFFIX =
  'the raw header text as `curl -D -` prints it (status line, then `name: value` lines) ' + 'or a JSON object of header name → value';

const STATUS_LINE = /^HTTP\/\d(?:\.\d)?\s+(\d{3})(?:\s|$)/i;
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const HEADER_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+)[ \t]*:[ \t]*(.*)$/;

/**
 * Either input form the CLI accepts. Header text starts with a status line or a header name, never
 * with `{` or `[`, so those mean JSON (and an array is then refused as the wrong JSON shape).
 */
export function parseHttpHeaders(spec: ShapeSpec, raw: string): HttpHeaders {
  const text = raw.replace(/^\uFEFF/, '');
  if (!/^\s*[{[]/.test(text)) return fromText(spec, text);
  const value = parseJson(spec, text, 'the header object');
  // An error body on its own: `{"error": {…}}` (OpenAI) or `{"type": "error", "error": {…}}` (Anthropic).
  if (isRecord(value) && isRecord(value['error'])) return { status: null, headers: new Map(), body: text };
  return fromJson(spec, value);
}

function addHeader(headers: Map<string, string>, name: string, value: string): void {
  const key = name.toLowerCase();
  const earlier = headers.get(key);
  // Repeated fields combine as HTTP does; a combined number no longer parses and becomes unknown.
  headers.set(key, earlier === undefined ? value : `${earlier}, ${value}`);
}

function fromJson(spec: ShapeSpec, value: unknown): HttpHeaders {
  if (!isRecord(value)) throw invalid(spec, `the header object must be a JSON object, got ${describeType(value)}`);
  const headers = new Map<string, string>();
  let status: number | null = null;
  for (const [name, entry] of Object.entries(value)) {
    const single = headerValue(entry);
    if (single === undefined) {
      throw invalid(spec, `header ${JSON.stringify(name)} must be a string, a number or an array of strings, got ${describeType(entry)}`);
    }
    if (single === null) continue;
    // HTTP/2 tools dump the status as the ':status' pseudo-header.
    if (name === ':status') status = parseStatus(spec, single);
    else addHeader(headers, name, single);
  }
  return { status, headers, body: null };
}

/** undefined: not a header value; null: explicitly no value. */
function headerValue(entry: unknown): string | null | undefined {
  if (entry === null) return null;
  if (typeof entry === 'string') return entry;
  if (typeof entry === 'number' && Number.isFinite(entry)) return String(entry);
  if (Array.isArray(entry) && entry.every((item): item is string => typeof item === 'string')) return entry.join(', ');
  return undefined;
}

function parseStatus(spec: ShapeSpec, value: string): number {
  if (!/^\d{3}$/.test(value.trim())) throw invalid(spec, `':status' must be a three-digit HTTP status, got ${JSON.stringify(value)}`);
  return Number(value.trim());
}

/**
 * `curl -D -` may print several header blocks (a 100 Continue, redirects) and then the body:
 * the last block that starts with a status line is the response that counts, and the first blank
 * line not followed by another status line ends the headers; what follows it is the body.
 */
function fromText(spec: ShapeSpec, text: string): HttpHeaders {
  const lines = text.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  let headers = new Map<string, string>();
  let status: number | null = null;
  let body: string | null = null;
  let lastName: string | null = null;
  let index = lines.findIndex((line) => line.trim() !== '');
  if (index === -1) throw invalid(spec, 'the header text is empty');
  for (; index < lines.length; index += 1) {
    const line = lines[index] ?? '';
    const statusMatch = STATUS_LINE.exec(line);
    if (statusMatch !== null) {
      status = Number(statusMatch[1]);
      headers = new Map();
      lastName = null;
      continue;
    }
    if (line.trim() === '') {
      const next = lines.slice(index + 1).find((candidate) => candidate.trim() !== '');
      if (next === undefined) break;
      if (!STATUS_LINE.test(next)) {
        body = lines.slice(index + 1).join('\n');
        break;
      }
      continue;
    }
    if ((line.startsWith(' ') || line.startsWith('\t')) && lastName !== null) {
      // Obsolete line folding: the line continues the previous header's value.
      addFolded(headers, lastName, line.trim());
      continue;
    }
    const headerMatch = HEADER_LINE.exec(line);
    if (headerMatch === null) throw invalid(spec, `line ${index + 1} is not a "name: value" header line: ${JSON.stringify(line.slice(0, 80))}`);
    const [, name = '', value = ''] = headerMatch;
    addHeader(headers, name, value.trim());
    lastName = name.toLowerCase();
  }
  if (status === null && headers.size === 0) throw invalid(spec, 'the header text holds no status line and no header');
  return { status, headers, body };
}

function addFolded(headers: Map<string, string>, name: string, continuation: string): void {
  headers.set(name, `${headers.get(name) ?? ''} ${continuation}`.trim());
}

/** A plain decimal number, or null. Number('') is 0, so the text is checked before converting. */
export function parseDecimal(text: string | undefined): number | null {
  if (text === undefined) return null;
  const trimmed = text.trim();
  if (!/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/.test(trimmed)) return null;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : null;
}

/** `retry-after` as seconds (`20`) or an HTTP date, counted from the observation time. */
export function retryAfterSeconds(headers: ReadonlyMap<string, string>, observedAt: Date): number | null {
  const text = headers.get('retry-after');
  if (text === undefined) return null;
  const seconds = parseDecimal(text);
  if (seconds !== null) return seconds >= 0 ? seconds : null;
  // Only the IMF-fixdate form HTTP uses: Date.parse alone accepts oddities such as '5' as a year.
  if (!HTTP_DATE.test(text.trim())) return null;
  const dateMs = Date.parse(text);
  if (!Number.isFinite(dateMs)) return null;
  return Math.max(0, (dateMs - observedAt.getTime()) / 1000);
}

/**
 * The warnings of the body that came with the headers. A body that is no provider error (a gateway's
 * HTML page, a truncated capture) gives none: the status line and headers still count on their own.
 */
export function bodyWarnings(provider: Provider, body: string | null, stamp: Stamp, retryAfter: number | null): ProviderWarning[] {
  if (body === null || body.trim() === '') return [];
  try {
    return errorBodyWarnings(provider, body, stamp, retryAfter);
  } catch (error) {
    if (isHandoffError(error)) return [];
    throw error;
  }
}
