import type { LimitFamily, Metric } from '../../schemas/telemetry.schema.js';
import { EPOCH_SECONDS_RANGE, lenientString, numberField, PERCENT_RANGE, recordField, type Field, type JsonRecord, type NumberRange } from './shape.js';

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

/** The account-wide family: its id, when Codex writes one at all (older lines have no limit_id). */
export const ACCOUNT_LIMIT_ID = 'codex';

export interface WindowObservation {
  readonly slot: Slot;
  readonly windowMinutes: number | null;
  /** null: the length matches no known window, so the slot is skipped rather than guessed. */
  readonly metric: Metric | null;
  readonly usedPercent: number | null;
  readonly resetsAt: number | null;
  /** A field of this window that could not be read: the window is then unknown, the others still count. */
  readonly problem: string | null;
}

/** What each slot held, for unknown reasons: a window, null, nothing at all, or something unreadable. */
export type SlotState = WindowObservation | 'null' | 'absent' | { readonly bad: string };

const WINDOW_MINUTES_RANGE: NumberRange = { min: 0, max: 1e7 };
const RESETS_IN_RANGE: NumberRange = { min: 0, max: 1e9 };

/**
 * The limit family a `rate_limits` object speaks for. Current Codex writes the account's limits with
 * `limit_id: "codex"` and a model's own limits (e.g. `codex_bengalfox`, `limit_name` "GPT-5.3-Codex-Spark")
 * in other token_count lines: undefined is the account, whose windows every model shares.
 */
export function limitFamily(rateLimits: JsonRecord): LimitFamily | undefined {
  const id = lenientString(rateLimits, 'limit_id', 200);
  if (id === null || id === ACCOUNT_LIMIT_ID) return undefined;
  return { id, name: lenientString(rateLimits, 'limit_name', 200) };
}

/**
 * Reads both slots of a `rate_limits` object in its current nested shape
 * (`primary: {used_percent, window_minutes, resets_at}`) or its older ones (`resets_in_seconds`,
 * or flat `primary_used_percent`, `primary_window_minutes`, `primary_resets_in_seconds` keys).
 * Relative resets count from the line's own time, not from when we read the file.
 */
export function readSlots(rateLimits: JsonRecord, path: string, lineTimeMs: number): Record<Slot, SlotState> {
  return {
    primary: readSlot(rateLimits, path, 'primary', lineTimeMs),
    secondary: readSlot(rateLimits, path, 'secondary', lineTimeMs),
  };
}

function readSlot(rateLimits: JsonRecord, path: string, slot: Slot, lineTimeMs: number): SlotState {
  if (rateLimits[slot] !== undefined) {
    const nested = recordField(rateLimits, slot, `${path}.${slot}`);
    if ('bad' in nested) return nested;
    if (nested.value === null) return 'null';
    return readWindow(nested.value, `${path}.${slot}.`, slot, lineTimeMs);
  }
  const flatKeys = Object.keys(rateLimits).filter((key) => key.startsWith(`${slot}_`));
  if (flatKeys.length === 0) return 'absent';
  return readWindow(rateLimits, `${path}.${slot}_`, slot, lineTimeMs, `${slot}_`);
}

function readWindow(obj: JsonRecord, pathPrefix: string, slot: Slot, lineTimeMs: number, keyPrefix = ''): WindowObservation {
  const problems: string[] = [];
  const field = (name: string, range: NumberRange): number | null => {
    const read: Field<number> = numberField(obj, `${keyPrefix}${name}`, `${pathPrefix}${name}`, range);
    if ('bad' in read) {
      problems.push(read.bad);
      return null;
    }
    return read.value;
  };
  const windowMinutes = field('window_minutes', WINDOW_MINUTES_RANGE);
  const usedPercent = field('used_percent', PERCENT_RANGE);
  const resetsAt = field('resets_at', EPOCH_SECONDS_RANGE);
  const resetsIn = field('resets_in_seconds', RESETS_IN_RANGE);
  const problem = problems.length === 0 ? null : problems.join('; ');
  return {
    slot,
    windowMinutes,
    metric: windowMinutes === null ? null : (WINDOW_METRICS.get(windowMinutes) ?? null),
    usedPercent: problem === null ? usedPercent : null,
    // Computed in milliseconds so whole-second inputs give whole-second epochs, without float noise.
    resetsAt: resetsAt ?? (resetsIn === null ? null : (lineTimeMs + resetsIn * 1000) / 1000),
    problem,
  };
}

export function describeSlot(slot: Slot, state: SlotState): string {
  if (typeof state === 'string') return `${slot}: ${state}`;
  if ('bad' in state) return `${slot}: unreadable`;
  return `${slot}: ${state.windowMinutes === null ? 'no window_minutes' : `${state.windowMinutes} min`}`;
}
