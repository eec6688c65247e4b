import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CODES } from '../../../protocol/index.js';

const CONTRACT_EXITS = new Set([0, 1, 2, 10, 11, 64, 65, 69, 74, 75, 77]);

describe('the code registry', () => {
  it('keys equal their code, statuses and exits are the contract ones', () => {
    for (const [key, spec] of Object.entries(CODES)) {
      expect(spec.code).toBe(key);
      expect(key).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(CONTRACT_EXITS.has(spec.exit)).toBe(true);
      // 1 and 2 are `handoff check` answers, successful requests all the same.
      expect(spec.exit === 0 || spec.exit === 1 || spec.exit === 2).toBe(spec.status < 300);
    }
  });

  it('docs/codes.md lists exactly the registry, row for row', () => {
    const doc = readFileSync(new URL('../../../docs/codes.md', import.meta.url), 'utf8');
    const rows = [...doc.matchAll(/^\| `([a-z_0-9]+)` \| (\d+) \| (\d+) \| (.+) \|$/gm)].map((m) => ({
      code: m[1],
      status: Number(m[2]),
      exit: Number(m[3]),
      summary: m[4],
    }));
    expect(rows).toEqual(Object.values(CODES).map(({ code, status, exit, summary }) => ({ code, status, exit, summary })));
  });
});
