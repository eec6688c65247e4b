import { HandoffError } from '../../protocol/errors.js';

/**
 * Shape checks shared by the adapters. A payload of the wrong shape is refused as a whole with
 * `invalid_body` rather than half-read: a field of the wrong type means we misunderstood the
 * format, and a guess there could become a wrong pressure number.
 */
export interface ShapeSpec {
  /** Prefix of every message, so the operator sees which adapter refused the payload. */
  readonly adapter: string;
  /** What the adapter expects, returned as the error's hint. */
  readonly hint: string;
}

export type JsonRecord = Record<string, unknown>;

export function invalid(spec: ShapeSpec, message: string): HandoffError {
  return new HandoffError('invalid_body', `${spec.adapter}: ${message}`, spec.hint);
}

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function describeType(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return type === 'object' ? 'an object' : `a ${type}`;
}

/** JSON.parse with the parser's complaint carried into an invalid_body message. */
export function parseJson(spec: ShapeSpec, text: string, what: string): unknown {
  try {
    // A UTF-8 BOM is common in files written by editors and is not part of the JSON text.
    return JSON.parse(text.replace(/^\uFEFF/, '')) as unknown;
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw invalid(spec, `${what} is not valid JSON (${detail})`);
  }
}

export function parseJsonObject(spec: ShapeSpec, text: string): JsonRecord {
  const value = parseJson(spec, text, 'the payload');
  if (!isRecord(value)) throw invalid(spec, `the payload must be one JSON object, got ${describeType(value)}`);
  return value;
}

/** null for an absent or null field; throws when present with another type than an object. */
export function optRecord(spec: ShapeSpec, obj: JsonRecord, key: string, path: string): JsonRecord | null {
  const value = obj[key];
  if (value === undefined || value === null) return null;
  if (!isRecord(value)) throw invalid(spec, `${path} must be an object or null, got ${describeType(value)}`);
  return value;
}

export function optString(spec: ShapeSpec, obj: JsonRecord, key: string, path: string): string | null {
  const value = obj[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw invalid(spec, `${path} must be a string or null, got ${describeType(value)}`);
  return value;
}

export interface NumberRange {
  readonly min: number;
  readonly max: number;
}

export function optNumber(spec: ShapeSpec, obj: JsonRecord, key: string, path: string, range: NumberRange): number | null {
  const value = obj[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw invalid(spec, `${path} must be a number or null, got ${describeType(value)}`);
  }
  if (value < range.min || value > range.max) {
    throw invalid(spec, `${path} must lie between ${range.min} and ${range.max}, got ${value}`);
  }
  return value;
}

/** 'absent' or 'null', for unknown reasons that say exactly what the payload held. */
export function missingWord(obj: JsonRecord | null, key: string): 'absent' | 'null' {
  return obj !== null && obj[key] === null ? 'null' : 'absent';
}

/** Percent as reported: never clamped, 0 allowed, above 100 kept (105 has been seen). */
export const PERCENT_RANGE: NumberRange = { min: 0, max: 100_000 };
/** Epoch seconds; milliseconds would overflow this and are refused rather than misread. */
export const EPOCH_SECONDS_RANGE: NumberRange = { min: 0, max: 1e11 };
/** Session ids become `executor`, which the reading schema bounds to 200 characters. */
export const EXECUTOR_MAX_LENGTH = 200;

export function optExecutor(spec: ShapeSpec, obj: JsonRecord, key: string, path: string): string | null {
  const value = optString(spec, obj, key, path);
  if (value === null || value === '') return null;
  if (value.length > EXECUTOR_MAX_LENGTH) {
    throw invalid(spec, `${path} is longer than ${EXECUTOR_MAX_LENGTH} characters`);
  }
  return value;
}

/**
 * A field read on its own: its value, null when absent or null, or why it cannot be read. Used where
 * one bad field must cost only its own metric, never the readings next to it.
 */
export type Field<T> = { readonly value: T | null } | { readonly bad: string };

/** Plain decimal text such as "42" or "9.3": some writers quote their numbers. Nothing else. */
const NUMERIC_TEXT = /^[+-]?(?:\d+(?:\.\d+)?|\.\d+)$/;

export function numberField(obj: JsonRecord | null, key: string, path: string, range: NumberRange): Field<number> {
  const raw = obj === null ? undefined : obj[key];
  if (raw === undefined || raw === null) return { value: null };
  const value = typeof raw === 'string' && NUMERIC_TEXT.test(raw.trim()) ? Number(raw.trim()) : raw;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    return { bad: `${path} is not a number (${typeof raw === 'string' ? JSON.stringify(raw.slice(0, 40)) : describeType(raw)})` };
  }
  if (value < range.min || value > range.max) return { bad: `${path} lies outside ${range.min}–${range.max} (${value})` };
  return { value };
}

export function recordField(obj: JsonRecord | null, key: string, path: string): Field<JsonRecord> {
  const raw = obj === null ? undefined : obj[key];
  if (raw === undefined || raw === null) return { value: null };
  return isRecord(raw) ? { value: raw } : { bad: `${path} is not an object (${describeType(raw)})` };
}

/** A string field; any other type reads as null, for fields that only route or name things. */
export function lenientString(obj: JsonRecord | null, key: string, maxLength = Infinity): string | null {
  const raw = obj === null ? undefined : obj[key];
  return typeof raw === 'string' && raw !== '' && raw.length <= maxLength ? raw : null;
}
