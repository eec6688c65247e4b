import { describe, expect, it } from 'vitest';
import type { DrainProgress } from '../../../protocol/drain-plan.js';
import { drainReport } from '../../../protocol/status-words.js';

const T0 = Date.parse('2026-12-05T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

function drain(steps: DrainProgress['steps'], extra: Partial<DrainProgress> = {}): DrainProgress {
  return {
    leg: 'out',
    started_at: iso(T0),
    no_wait: false,
    drained_at: iso(T0 + 1_000),
    waited: { at: iso(T0 + 1_000), why: 'drained' },
    revision: 0,
    steps,
    manifests: [],
    revision_at: null,
    previous_commit: null,
    ...extra,
  };
}

const step = (at: string) => ({ at, sha256: null, summary: {} });

describe('how long each drain step took, from journal times', () => {
  it('a step time that does not parse is unknown (null), never NaN, and the next step still counts from it as unknown', () => {
    const report = drainReport(drain({ inspect: step('not a time'), validate: step(iso(T0 + 5_000)) }), false, T0 + 9_000);
    expect(report.steps.find((s) => s.step === 'inspect')?.seconds).toBeNull();
    expect(report.steps.find((s) => s.step === 'validate')?.seconds).toBeNull();
    expect(report.current).toMatchObject({ step: 'snapshot', status: 'running', seconds: 4 });
    for (const s of report.steps) expect(Number.isNaN(s.seconds)).toBe(false);
  });

  it('an unparsable blocked_at leaves the blocked step without a time instead of NaN', () => {
    const report = drainReport(drain({ inspect: step(iso(T0 + 2_000)) }, { blocked_at: 'garbage' }), true, T0 + 9_000);
    expect(report.current).toMatchObject({ step: 'validate', status: 'blocked', seconds: null });
  });

  it('times that parse count from the end of the step before, in whole seconds', () => {
    const report = drainReport(drain({ inspect: step(iso(T0 + 3_400)), validate: step(iso(T0 + 6_000)) }), false, T0 + 7_600);
    expect(report.steps.slice(0, 2).map((s) => s.seconds)).toEqual([2, 3]);
    expect(report.current).toMatchObject({ step: 'snapshot', seconds: 2 });
  });
});
