import { describe, expect, it } from 'vitest';
import { compareUrgency, urgencyRank, type UrgencyInput } from '../../../protocol/urgency.js';
import { formatRelative } from '../../../protocol/time-words.js';

const view = (workspace: string, state: UrgencyInput['state'], percent: number | null = null, blocked: string | null = null): UrgencyInput => ({
  workspace,
  state,
  blocked,
  pressure: percent === null ? null : { percent, metric: 'five_hour', source: 'claude-statusline' },
});

describe('which workspace needs a person first', () => {
  it('a stopped drain, a drain under way, work on offer, pressure, work taken over, then the quiet ones', () => {
    const views = [
      view('/a-closed', 'CLOSED'),
      view('/b-normal', 'NORMAL', 40),
      view('/c-takeover', 'TAKEOVER'),
      view('/d-prepare', 'PREPARE', 82),
      view('/e-ready', 'HANDOFF_READY'),
      view('/f-return', 'RETURN_HANDOFF_READY'),
      view('/g-evacuate', 'EVACUATE', 93),
      view('/z-stuck', 'EVACUATE', 91, 'the remote is unreachable'),
    ];
    expect([...views].sort(compareUrgency).map((v) => v.workspace)).toEqual([
      '/z-stuck',
      '/g-evacuate',
      '/e-ready',
      '/f-return',
      '/d-prepare',
      '/c-takeover',
      '/b-normal',
      '/a-closed',
    ]);
    expect(urgencyRank(view('/x', 'NORMAL', null, 'blocked'))).toBe(0);
  });

  it('within a rank: the higher pressure first, unknown last, then by path', () => {
    const views = [view('/b', 'PREPARE'), view('/c', 'PREPARE', 81), view('/a', 'PREPARE', 88), view('/d', 'PREPARE', 81)];
    expect([...views].sort(compareUrgency).map((v) => v.workspace)).toEqual(['/a', '/c', '/d', '/b']);
  });
});

describe('a moment in words', () => {
  it('ahead is "in …", behind is "… ago"', () => {
    expect([7200 + 300, 45, 1, 0, -120].map(formatRelative)).toEqual(['in 2 h 5 min', 'in 45 s', '0 s ago', '0 s ago', '2 min ago']);
  });
});
