import { describe, expect, it } from 'vitest';
import { stageMoveWords, stageStartedWords } from '../../../protocol/stage-move-words.js';

const call = { metric: 'five_hour', percent: 95, source: 'claude-statusline' };
const none = { metric: null, percent: null, source: null };

describe('stageMoveWords: the stage, then the reading that calls for it', () => {
  it('names the metric and percent of the reading', () => {
    expect(stageMoveWords({ state: 'EVACUATE', ...call })).toBe('EVACUATE: five_hour 95 %');
  });

  it('is the stage alone when no reading called for it', () => {
    expect(stageMoveWords({ state: 'PREPARE', ...none })).toBe('PREPARE');
  });
});

describe('stageStartedWords: what `handoff unpause` started, and what follows', () => {
  it('EVACUATE names the handoff branch it checkpoints onto and how to follow it', () => {
    expect(stageStartedWords({ state: 'EVACUATE', ...call, workspace: '/w/a', cycle: '20260820T100000Z-abcdef' })).toBe(
      'EVACUATE starts now in /w/a: five_hour 95 %; the daemon checkpoints the work onto handoff/20260820T100000Z-abcdef — `handoff status` follows it',
    );
  });

  it('EVACUATE before its cycle has an id leaves the id open rather than invent one', () => {
    expect(stageStartedWords({ state: 'EVACUATE', ...none, workspace: '/w/a', cycle: null })).toBe(
      'EVACUATE starts now in /w/a; the daemon checkpoints the work onto handoff/… — `handoff status` follows it',
    );
  });

  it('PREPARE says the agent refreshes its capsule; another stage is named alone', () => {
    expect(stageStartedWords({ state: 'PREPARE', ...call, workspace: '/w/a', cycle: null })).toBe(
      'PREPARE starts now in /w/a: five_hour 95 %; the agent refreshes its capsule',
    );
    expect(stageStartedWords({ state: 'NORMAL', ...none, workspace: '/w/a', cycle: null })).toBe('NORMAL starts now in /w/a');
  });
});
