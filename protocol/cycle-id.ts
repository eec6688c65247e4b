export const CYCLE_ID_PATTERN = '^[0-9]{8}T[0-9]{6}Z-[a-z2-7]{6}$';
const CYCLE_ID = new RegExp(CYCLE_ID_PATTERN);
const ENTROPY = /^[a-z2-7]{6}$/;

/** An id as people see it in examples and hints (test/unit/protocol/cycle-id.test.ts keeps it valid). */
export const CYCLE_ID_EXAMPLE = '20261129T081500Z-k3f7qa';

/** `20261129T081500Z-k3f7qa`: UTC time of the evacuation plus six base32 characters of entropy. */
export function formatCycleId(atMs: number, entropy: string): string {
  if (!ENTROPY.test(entropy)) throw new Error(`cycle entropy must be six base32 characters, got '${entropy}'`);
  const stamp = new Date(atMs)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
  return `${stamp}-${entropy}`;
}

export function isCycleId(value: string): boolean {
  return CYCLE_ID.test(value);
}
