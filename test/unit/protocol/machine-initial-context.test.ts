import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { initialSnapshot, persist, stateOf } from '../../../protocol/index.js';
import { POLICY } from './machine-harness.js';

describe('a fresh workspace', () => {
  it('is NORMAL since it started, on its own settings, with nothing recorded, held or owed: the record the journal starts from', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_000_000_000_000 }), fc.constantFrom('one-way' as const, 'emergency-return' as const), (at, profile) => {
        const snapshot = initialSnapshot({ root: '/repo', policy: POLICY, profile, at });
        expect(stateOf(snapshot)).toBe('NORMAL');
        expect(persist(snapshot).context).toEqual({
          root: '/repo',
          policy: POLICY,
          profile,
          now: at,
          entropy: 'aaaaaa',
          stage: 'NORMAL',
          stage_since: new Date(at).toISOString(),
          readings: {},
          warnings: [],
          paused: { global: null, workspace: null },
          cycle: null,
          blocked: null,
          lease: { holder: null, last_token: 0, offered: false, last_break: null },
          capsule: null,
          prepare_since: null,
          prepare_requested_at: null,
          cancelled_at: null,
          outcome: { code: 'ok', message: null, hint: null, data: null, changed: false },
        });
      }),
      { numRuns: 20 },
    );
  });
});
