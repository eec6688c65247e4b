/** Milliseconds per unit of a Go duration, as OpenAI writes `x-ratelimit-reset-*` (`6m0s`, `12ms`). */
const DURATION_UNITS_MS: ReadonlyMap<string, number> = new Map([
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
  ['ms', 1],
  ['us', 0.001],
  ['µs', 0.001],
  ['ns', 0.000_001],
]);

// Longer unit names first, so `ms` is not read as `m` followed by a stray `s`.
const DURATION_PART_SOURCE = String.raw`(\d+(?:\.\d+)?|\.\d+)(ms|us|µs|ns|h|m|s)`;

/**
 * A Go duration string (`1s`, `6m0s`, `12ms`, `1h2m3.5s`) in milliseconds, or null when the text
 * is anything else. A bare number is refused: its unit would be a guess.
 */
export function parseGoDurationMs(text: string): number | null {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  if (trimmed === '0') return 0;
  let total = 0;
  // A sticky regex carries lastIndex between calls, so each call builds its own.
  const part = new RegExp(DURATION_PART_SOURCE, 'y');
  while (part.lastIndex < trimmed.length) {
    const match = part.exec(trimmed);
    if (match === null) return null;
    const [, amount = '', unit = ''] = match;
    const unitMs = DURATION_UNITS_MS.get(unit);
    if (unitMs === undefined) return null;
    total += Number(amount) * unitMs;
  }
  return Number.isFinite(total) ? total : null;
}

const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/** An RFC 3339 time as epoch seconds, or null. The offset is required: a local time would be a guess. */
export function parseRfc3339Seconds(text: string): number | null {
  const trimmed = text.trim();
  if (!RFC_3339.test(trimmed)) return null;
  const ms = Date.parse(trimmed.replace(' ', 'T'));
  return Number.isFinite(ms) && ms >= 0 ? ms / 1000 : null;
}
