import { describe, expect, it } from 'vitest';
import { ReadingHistory } from '../../../daemon/http/dashboard/history.js';
import { StageMarks } from '../../../daemon/http/dashboard/stage-marks.js';
import type { Reading } from '../../../schemas/index.js';

const reading = (metric: Reading['metric'], percent: number | null, at: string, executor: string | null = null): Reading => ({
  source: 'claude-statusline',
  metric,
  used_percent: percent,
  resets_at: null,
  observed_at: at,
  raw_sha256: null,
  executor,
});

describe('the readings timeline', () => {
  it('keeps one series per source, metric and session, in time order, bounded', () => {
    const history = new ReadingHistory({ pointsPerSeries: 3, seriesPerWorkspace: 2 });
    for (let i = 0; i < 5; i++) history.record('/r', reading('five_hour', 70 + i, `2026-11-29T10:0${i}:00.000Z`));
    history.record('/r', reading('five_hour', 60, '2026-11-29T09:59:00.000Z', 'other'));
    const series = history.series('/r');
    expect(series.map((s) => s.key)).toEqual(['claude-statusline/five_hour/-', 'claude-statusline/five_hour/other']);
    expect(series[0]?.points.map((p) => p.percent)).toEqual([72, 73, 74]);
    // A third series pushes out the one updated longest ago.
    history.record('/r', reading('context', 10, '2026-11-29T10:09:00.000Z'));
    expect(history.series('/r').map((s) => s.key)).toEqual(['claude-statusline/context/-', 'claude-statusline/five_hour/other']);
    expect(history.series('/elsewhere')).toEqual([]);
  });

  it('is seeded from the journal records, skipping what is not a recorded reading', () => {
    const history = new ReadingHistory();
    history.seed([
      { kind: 'workspace', root: '/r', event: { type: 'READING', reading: reading('context', 40, '2026-11-29T10:00:00.000Z') } },
      { kind: 'workspace', root: '/r', event: { type: 'PREPARE' } },
      { kind: 'workspace', root: '/r', event: { type: 'READING', reading: reading('context', 85, '2026-11-29T10:01:00.000Z') } },
      null,
      'garbage',
    ]);
    expect(history.series('/r')[0]?.points).toEqual([
      { t: '2026-11-29T10:00:00.000Z', percent: 40 },
      { t: '2026-11-29T10:01:00.000Z', percent: 85 },
    ]);
  });
});

describe('the stage markers', () => {
  it('keep each stage entry once, bounded, seeded from snapshots and changes that set a stage', () => {
    const marks = new StageMarks();
    marks.seed([
      { kind: 'snapshot', root: '/r', context: { stage: 'NORMAL', stage_since: '2026-11-29T09:00:00.000Z' } },
      { kind: 'workspace', root: '/r', state: 'PREPARE', set: { stage: 'PREPARE', stage_since: '2026-11-29T10:00:00.000Z' } },
      { kind: 'workspace', root: '/r', state: 'PREPARE', set: { now: 1 } },
      { kind: 'workspace', root: '/r', set: { stage: 'NOT_A_STAGE', stage_since: '2026-11-29T10:01:00.000Z' } },
      null,
    ]);
    marks.record('/r', 'PREPARE', '2026-11-29T10:00:00.000Z');
    marks.record('/r', 'EVACUATE', '2026-11-29T10:05:00.000Z');
    expect(marks.of('/r')).toEqual([
      { stage: 'NORMAL', at: '2026-11-29T09:00:00.000Z' },
      { stage: 'PREPARE', at: '2026-11-29T10:00:00.000Z' },
      { stage: 'EVACUATE', at: '2026-11-29T10:05:00.000Z' },
    ]);
    for (let i = 0; i < 40; i++) marks.record('/s', i % 2 === 0 ? 'NORMAL' : 'PREPARE', new Date(Date.UTC(2026, 10, 29, 10, i)).toISOString());
    expect(marks.of('/s')).toHaveLength(16);
    expect(marks.of('/s').at(-1)?.at).toBe('2026-11-29T10:39:00.000Z');
    expect(marks.of('/elsewhere')).toEqual([]);
  });
});
