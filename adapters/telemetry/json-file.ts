import { METRICS } from '../../schemas/telemetry.schema.js';
import type { Metric, Reading } from '../../schemas/telemetry.schema.js';
import type { AdapterResult, ParseContext, UnknownMetric } from './adapter-contract.js';
import { reading, result, sha256Hex, type Stamp } from './record-builders.js';
import {
  describeType,
  EPOCH_SECONDS_RANGE,
  invalid,
  isRecord,
  optNumber,
  optString,
  parseJsonObject,
  PERCENT_RANGE,
  type JsonRecord,
  type ShapeSpec,
} from './shape.js';

const SPEC: ShapeSpec = {
  adapter: 'json-file',
  hint:
    'send {"readings": [{"metric": "five_hour", "used_percent": 42.5, "resets_at": 1787234400}], "cwd": "/path"} ' +
    `with metric one of ${METRICS.join(', ')}, used_percent a number (or null when unknown), resets_at epoch seconds`,
};

const TOP_KEYS: ReadonlySet<string> = new Set(['readings', 'cwd']);
const READING_KEYS: ReadonlySet<string> = new Set(['metric', 'used_percent', 'resets_at']);
const METRIC_SET: ReadonlySet<string> = new Set(METRICS);

function isMetric(value: unknown): value is Metric {
  return typeof value === 'string' && METRIC_SET.has(value);
}

/**
 * A script's own readings. Strict on purpose: scripts are written by hand, and a misspelt key
 * (`used_pct`) silently ignored would look like telemetry that went missing.
 */
export function parseJsonFile(raw: string, ctx: ParseContext): AdapterResult {
  const payload = parseJsonObject(SPEC, raw);
  rejectExtraKeys(payload, TOP_KEYS, 'the payload');
  const list = payload['readings'];
  if (!Array.isArray(list)) throw invalid(SPEC, `readings must be an array, got ${describeType(list)}`);
  const cwd = optString(SPEC, payload, 'cwd', 'cwd');
  if (cwd === '') throw invalid(SPEC, 'cwd must not be empty');
  const stamp: Stamp = {
    source: 'json-file',
    observedAt: ctx.observedAt.toISOString(),
    rawSha256: sha256Hex(raw),
    executor: null,
  };
  const readings: Reading[] = [];
  const unknown: UnknownMetric[] = [];
  const seen = new Set<Metric>();
  list.forEach((item: unknown, index) => {
    const path = `readings[${index}]`;
    if (!isRecord(item)) throw invalid(SPEC, `${path} must be an object, got ${describeType(item)}`);
    rejectExtraKeys(item, READING_KEYS, path);
    const metric = item['metric'];
    if (!isMetric(metric)) throw invalid(SPEC, `${path}.metric must be one of ${METRICS.join(', ')}, got ${JSON.stringify(metric) ?? 'nothing'}`);
    if (seen.has(metric)) throw invalid(SPEC, `${path}.metric ${metric} appears twice; one reading per metric`);
    seen.add(metric);
    if (!('used_percent' in item)) throw invalid(SPEC, `${path}.used_percent is required (null when unknown)`);
    const used = optNumber(SPEC, item, 'used_percent', `${path}.used_percent`, PERCENT_RANGE);
    const resetsAt = optNumber(SPEC, item, 'resets_at', `${path}.resets_at`, EPOCH_SECONDS_RANGE);
    if (used === null) unknown.push({ metric, reason: `${path}.used_percent is null` });
    else readings.push(reading(stamp, metric, used, resetsAt));
  });
  return result({ readings, unknown, route: { cwd, session_id: null } });
}

function rejectExtraKeys(obj: JsonRecord, allowed: ReadonlySet<string>, path: string): void {
  const extra = Object.keys(obj).filter((key) => !allowed.has(key));
  if (extra.length > 0) throw invalid(SPEC, `${path} has unexpected keys: ${extra.join(', ')}`);
}
