import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CYCLE_ID_EXAMPLE, formatCycleId, isCycleId } from '../../../protocol/cycle-id.js';

describe('the cycle id people are shown', () => {
  it('is a valid one, and the help examples use it', () => {
    expect(isCycleId(CYCLE_ID_EXAMPLE)).toBe(true);
    const help = readFileSync(new URL('../../../daemon/cli/program.ts', import.meta.url), 'utf8');
    const shown = [...help.matchAll(/\b\d{8}T\d{6}Z-[a-z0-9]{6}\b/g)].map((m) => m[0]);
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.filter((id) => !isCycleId(id))).toEqual([]);
  });
});

describe('a cycle id', () => {
  it('is the UTC second of the evacuation and six base32 characters, and nothing else is one', () => {
    expect(formatCycleId(Date.parse('2026-11-29T08:15:00.999Z'), 'k3f7qa')).toBe('20261129T081500Z-k3f7qa');
    expect(() => formatCycleId(0, 'K3F7QA')).toThrow("cycle entropy must be six base32 characters, got 'K3F7QA'");
    for (const entropy of ['k3f7q', 'k3f7qa1', 'k3f7q1', ' k3f7qa']) expect(() => formatCycleId(0, entropy), entropy).toThrow();
    for (const id of ['20261129T081500Z-k3f7q', '20261129T081500-k3f7qa', 'x20261129T081500Z-k3f7qa', '20261129T081500Z-k3f7qa\n', '20261129T081500Z-K3F7QA']) {
      expect(isCycleId(id), id).toBe(false);
    }
  });
});
