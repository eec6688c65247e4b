import { describe, expect, it } from 'vitest';
import { HandoffError, persist } from '../../../protocol/index.js';
import { foldJournal } from '../../../daemon/workspaces/journal-fold.js';
import { Harness } from '../protocol/machine-harness.js';

describe('foldJournal', () => {
  it('a snapshot, then deltas and coalesced readings, yield the latest state; a legacy whole record replaces', () => {
    const h = new Harness();
    const base = persist(h.snapshot);
    h.send({ type: 'LEASE_ACQUIRE', executor: 'me' });
    const after = persist(h.snapshot);
    const readings = {
      k: {
        source: 'claude-statusline',
        metric: 'context',
        used_percent: 1,
        resets_at: null,
        observed_at: '2026-08-20T10:00:00.000Z',
        raw_sha256: null,
        executor: null,
      },
    };
    const folded = foldJournal([
      { kind: 'snapshot', root: '/repo', ...base },
      { kind: 'workspace', root: '/repo', event: { type: 'LEASE_ACQUIRE' }, state: after.state, set: { lease: after.context.lease } },
      { kind: 'readings', root: '/repo', readings },
      { kind: 'workspace', root: '/other', event: { type: 'X' }, ...{ ...base, context: { ...base.context, root: '/other' } } },
    ]);
    expect(folded.get('/repo')?.context.lease.holder?.executor).toBe('me');
    expect(folded.get('/repo')?.context.readings).toEqual(readings);
    expect(folded.get('/other')?.state).toBe('NORMAL');
  });

  it('a change without a base, an unknown kind or state is corrupt_record naming the record', () => {
    const h = new Harness();
    const base = persist(h.snapshot);
    const cases: unknown[][] = [
      [{ kind: 'workspace', root: '/repo', state: 'NORMAL', set: {} }],
      [{ kind: 'mystery', root: '/repo' }],
      [{ kind: 'snapshot', root: '/repo', ...base, state: 'NOWHERE' }],
      [{ kind: 'snapshot', root: '/elsewhere', ...base }],
    ];
    for (const records of cases) {
      let error: unknown;
      try {
        foldJournal(records);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(HandoffError);
      expect((error as HandoffError).code).toBe('corrupt_record');
      expect((error as HandoffError).message).toMatch(/journal record 1 /);
    }
  });
});
