import { describe, expect, it } from 'vitest';
import { describeQuality, isActionable, parseCapsuleMarkdown, scoreCapsule } from '../../../protocol/index.js';
import { EMPTY_CAPSULE } from '../../../protocol/manifest-model.js';
import type { Capsule } from '../../../schemas/index.js';

const FULL: Capsule = {
  ...(EMPTY_CAPSULE as Capsule),
  objective: 'o',
  next_action: 'run `npm test`',
  acceptance_criteria: ['green'],
  first_files: ['src/a.ts'],
};
const at = { existingFiles: new Set(['src/a.ts']), capsuleUpdatedAt: '2026-08-20T10:00:00Z', stageStartedAt: '2026-08-20T10:00:00Z' };

describe('parseCapsuleMarkdown: the headings a person writes, in any of their spellings', () => {
  it('reads a heading at any level, in any case, with a trailing colon or dot, `_`/`-` for spaces', () => {
    const text = ['#### ACCEPTANCE_CRITERIA:', '- a', '## do-not   repeat.', '- b', '##  Next Action ', 'x'].join('\n');
    expect(parseCapsuleMarkdown(text)).toEqual({ acceptance_criteria: ['a'], do_not_repeat: ['b'], next_action: 'x' });
  });

  it('takes every list marker (-, *, +, 1., 1)) and skips lines that are not items', () => {
    const text = ['## Risks', '- a', '* b', '+ c', '1. d', '2) e', 'prose, not an item', '-f', '  - g  '].join('\n');
    expect(parseCapsuleMarkdown(text)).toEqual({ risks: ['a', 'b', 'c', 'd', 'e', 'g'] });
  });

  it('keeps a text section across lines and CRLF, trimmed, and drops one that is empty', () => {
    expect(parseCapsuleMarkdown('## Objective\r\n\r\nline one\r\n  line two\r\n\r\n## Next action\r\n\r\n')).toEqual({ objective: 'line one\n  line two' });
  });

  it('the work lists go under work, and only when one has an item', () => {
    expect(parseCapsuleMarkdown('## Work\n### In progress\n- a\n### Deferred\n- b')).toEqual({ work: { in_progress: ['a'], deferred: ['b'] } });
    expect(parseCapsuleMarkdown('## Work\nprose under the parent heading\n### Blocked\n')).toEqual({});
  });

  it('a first file in backticks is the path itself; other lists keep their backticks', () => {
    expect(parseCapsuleMarkdown('## First files\n- `src/a.ts`\n## Decisions\n- `x`')).toEqual({ first_files: ['src/a.ts'], decisions: ['`x`'] });
  });

  it('lines before any heading and under a top-level capsule title are not content', () => {
    expect(parseCapsuleMarkdown('- stray\n# Capsule\n- stray too\n# Handoff capsule for the parser\n- again')).toEqual({});
  });

  it('a capsule title below the top level is an unknown heading, named as written', () => {
    expect(() => parseCapsuleMarkdown('## Capsule')).toThrow("unknown heading 'Capsule': use the headings of `handoff capsule template`");
  });

  it('lines of the template left as they are count for nothing', () => {
    expect(parseCapsuleMarkdown('## Decisions\n- what was decided, and why\n- \n## Objective\nOne or two sentences: what this work is for.')).toEqual({});
  });
});

describe('scoreCapsule: one point per rule, the reason in words a writer can act on', () => {
  it('a capsule without a next action or first files says so', () => {
    expect(scoreCapsule({ ...FULL, next_action: null, first_files: [] }, at).missing).toEqual(['no next action', 'no first files']);
  });

  it('work in progress alone asks for decisions; a do-not-repeat alone answers it', () => {
    const working = { ...FULL, work: { ...FULL.work, in_progress: ['x'] } };
    expect(scoreCapsule(working, at).missing).toEqual(['work done but no decisions or do-not-repeat']);
    expect(scoreCapsule({ ...working, do_not_repeat: ['y'] }, at).missing).toEqual([]);
  });

  it('names a few absent first files, and how many more only when there are more', () => {
    const files = (n: number) => Array.from({ length: n }, (_, i) => `f${i}.ts`);
    expect(scoreCapsule({ ...FULL, first_files: files(5) }, at).missing).toEqual(['first files not in the repository: f0.ts, f1.ts, f2.ts, f3.ts, f4.ts']);
    expect(scoreCapsule({ ...FULL, first_files: ['src/a.ts', ...files(6)] }, at).missing).toEqual([
      'first files not in the repository: f0.ts, f1.ts, f2.ts, f3.ts, f4.ts and 1 more',
    ]);
  });

  it('is fresh when written at the moment the stage began or when no stage asked; stale when never written', () => {
    expect(scoreCapsule(FULL, at).score).toBe(6);
    expect(scoreCapsule(FULL, { ...at, stageStartedAt: null, capsuleUpdatedAt: null }).score).toBe(6);
    expect(scoreCapsule(FULL, { ...at, capsuleUpdatedAt: null }).missing).toEqual(['capsule older than the stage that asked for it']);
  });
});

describe('isActionable: each way a next action can name something', () => {
  it.each([
    ['open `the parser`', true],
    ['look in lib/parser', true],
    ['fix parser.rs', true],
    ['fix config.yml then config.yaml', true],
    ['cargo build', true],
    ['write the spec', true],
    ['RUN THE TESTS', true],
    ['fix the parser.', false],
    ['latest', false],
    ['a/', false],
  ])('"%s": %s', (action, expected) => {
    expect(isActionable(action)).toBe(expected);
  });
});

describe('describeQuality: the score, then what keeps it down', () => {
  it('is the score alone at full marks, and the reasons after a colon otherwise', () => {
    expect(describeQuality({ score: 6, max: 6, missing: [] })).toBe('capsule 6/6');
    expect(describeQuality({ score: 4, max: 6, missing: ['no objective', 'no first files'] })).toBe('capsule 4/6: no objective; no first files');
  });
});
