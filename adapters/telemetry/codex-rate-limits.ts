import type { Metric } from '../../schemas/telemetry.schema.js';
import {
  EPOCH_SECONDS_RANGE,
  optNumber,
  optRecord,
  PERCENT_RANGE,
  type JsonRecord,
  type ShapeSpec,
} from './shape.js';

/**
 * A window is known by its length, never by its slot: some plans put the weekly window in
 * `primary` with `secondary: null`. 299/10079 come from older files that rounded down.
 */
const WINDOW_METRICS: ReadonlyMap<number, Metric> = new Map<number, Metric>([
  [300, 'five_hour'],
  [299, 'five_hour'],
  [10080, 'weekly'],
  [10079, 'weekly'],
  [43200, 'monthly'],
  [43800, 'monthly'],
]);

export const SLOTS = ['primary', 'secondary'] as const;
export type Slot = (typeof SLOTS)[number];

export interface WindowObservation {
  readonly slot: Slot;
  readonly windowMinutes: number | null;
  /** null: the length matches no known window, so the slot is skipped rather than guessed. */
  readonly metric: Metric | null;
  readonly usedPercent: number | null;
  readonly resetsAt: number | null;
}

/** What each slot held, for unknown reasons: a window, null, or nothing at all. */
export type SlotState = WindowObservation | 'null' | 'absent';

const WINDOW_MINUTES_RANGE = { min: 0, max: 1e7 };
const RESETS_IN_RANGE = { min: 0, max: 1e9 };

/**
 * Reads both slots of a `rate_limits` object in its current nested shape
 * (`primary: {used_percent, window_minutes, resets_at}`) or its older ones (`resets_in_seconds`,
 * or flat `primary_used_percent`, `primary_window_minutes`, `primary_resets_in_seconds` keys).
 * Relative resets count from the line's own time, not from when we read the file.
 */
export function readSlots(
  spec: ShapeSpec,
  rateLimits: JsonRecord,
  path: string,
  lineTimeMs: number,
): Record<Slot, SlotState> {
  return {
    primary: readSlot(spec, rateLimits, path, 'primary', lineTimeMs),
    secondary: readSlot(spec, rateLimits, path, 'secondary', lineTimeMs),
  };
}

function readSlot(spec: ShapeSpec, rateLimits: JsonRecord, path: string, slot: Slot, lineTimeMs: number): SlotState {
  if (rateLimits[slot] !== undefined) {
    const nested = optRecord(spec, rateLimits, slot, `${path}.${slot}`);
    if (nested === null) return 'null';
    return readWindow(spec, nested, `${path}.${slot}.`, slot, lineTimeMs);
  }
  const flatKeys = Object.keys(rateLimits).filter((key) => key.startsWith(`${slot}_`));
  if (flatKeys.length === 0) return 'absent';
  return readWindow(spec, rateLimits, `${path}.${slot}_`, slot, lineTimeMs, `${slot}_`);
}

function readWindow(
  spec: ShapeSpec,
  obj: JsonRecord,
  pathPrefix: string,
  slot: Slot,
  lineTimeMs: number,
  keyPrefix = '',
): WindowObservation {
  const field = (name: string, range: { min: number; max: number }): number | null =>
    optNumber(spec, obj, `${keyPrefix}${name}`, `${pathPrefix}${name}`, range);
  const windowMinutes = field('window_minutes', WINDOW_MINUTES_RANGE);
  const usedPercent = field('used_percent', PERCENT_RANGE);
  const resetsAt = field('resets_at', EPOCH_SECONDS_RANGE);
  const resetsIn = field('resets_in_seconds', RESETS_IN_RANGE);
  return {
    slot,
    windowMinutes,
    metric: windowMinutes === null ? null : WINDOW_METRICS.get(windowMinutes) ?? null,
    usedPercent,
    // Computed in milliseconds so whole-second inputs give whole-second epochs, without float noise.
    resetsAt: resetsAt ?? (resetsIn === null ? null : (lineTimeMs + resetsIn * 1000) / 1000),
  };
}

export function describeSlot(slot: Slot, state: SlotState): string {
  if (typeof state === 'string') return `${slot}: ${state}`;
  return `${slot}: ${state.windowMinutes === null ? 'no window_minutes' : `${state.windowMinutes} min`}`;
}
