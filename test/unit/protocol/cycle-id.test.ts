import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CYCLE_ID_EXAMPLE, isCycleId } from '../../../protocol/cycle-id.js';

describe('the cycle id people are shown', () => {
  it('is a valid one, and the help examples use it', () => {
    expect(isCycleId(CYCLE_ID_EXAMPLE)).toBe(true);
    const help = readFileSync(new URL('../../../daemon/cli/program.ts', import.meta.url), 'utf8');
    const shown = [...help.matchAll(/\b\d{8}T\d{6}Z-[a-z0-9]{6}\b/g)].map((m) => m[0]);
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.filter((id) => !isCycleId(id))).toEqual([]);
  });
});
