import { describe, expect, it } from 'vitest';
import { capsuleTemplate, isActionable, parseCapsuleMarkdown, scoreCapsule } from '../../../protocol/index.js';
import { CapsuleSchema, type Capsule } from '../../../schemas/index.js';
import { createAjv } from '../../../daemon/schema-check.js';

const validate = createAjv().compile<Capsule>(CapsuleSchema);
const asCapsule = (value: unknown): Capsule => {
  const copy = structuredClone(value);
  if (!validate(copy)) throw new Error(JSON.stringify(validate.errors));
  return copy;
};

const FULL_MARKDOWN = `# Handoff capsule

## Objective
Make the retry budget configurable.

## Next action
Run \`npm test -- src/retry.test.ts\` and fix the off-by-one in src/retry.ts.

## Acceptance criteria
- npm test passes
- the budget is read from config

## Work
### Completed
- parsed the config key
### In progress
- src/retry.ts loop bound

## Decisions
- keep the default at 3

## Do not repeat
- do not rename the config key

## First files
- \`src/retry.ts\`
`;

const FULL_JSON = {
  objective: 'Make the retry budget configurable.',
  next_action: 'Run `npm test -- src/retry.test.ts` and fix the off-by-one in src/retry.ts.',
  acceptance_criteria: ['npm test passes', 'the budget is read from config'],
  work: { completed: ['parsed the config key'], in_progress: ['src/retry.ts loop bound'] },
  decisions: ['keep the default at 3'],
  do_not_repeat: ['do not rename the config key'],
  first_files: ['src/retry.ts'],
};

const context = { existingFiles: new Set(['src/retry.ts']), capsuleUpdatedAt: '2026-08-20T10:05:00Z', stageStartedAt: '2026-08-20T10:00:00Z' };

describe('the Markdown capsule', () => {
  it('gives the same capsule as its JSON form', () => {
    expect(asCapsule(parseCapsuleMarkdown(FULL_MARKDOWN))).toEqual(asCapsule(FULL_JSON));
  });

  it('the template is valid, holds every heading, and counts for nothing until filled in', () => {
    const parsed = asCapsule(parseCapsuleMarkdown(capsuleTemplate()));
    expect(parsed.objective).toBeNull();
    expect(parsed.acceptance_criteria).toEqual([]);
    for (const heading of [
      'Objective',
      'Next action',
      'Acceptance criteria',
      'Completed',
      'Decisions',
      'Do not repeat',
      'First files',
      'Risks',
      'Tools used',
    ]) {
      expect(capsuleTemplate()).toContain(heading);
    }
  });

  it('refuses an unknown heading instead of dropping its section', () => {
    expect(() => parseCapsuleMarkdown('## Objectiv\nx')).toThrow(/unknown heading 'Objectiv'/);
  });
});

describe('capsule quality', () => {
  it('a full capsule scores full marks', () => {
    expect(scoreCapsule(asCapsule(FULL_JSON), context)).toEqual({ score: 6, max: 6, missing: [] });
  });

  it.each([
    ['objective', { objective: null }, 'no objective'],
    ['next action', { next_action: 'keep going' }, 'next action vague (name a file, command or test)'],
    ['acceptance criteria', { acceptance_criteria: [] }, 'no acceptance criteria'],
    ['first files', { first_files: ['src/gone.ts'] }, 'first files not in the repository: src/gone.ts'],
    ['decisions', { decisions: [], do_not_repeat: [] }, 'work done but no decisions or do-not-repeat'],
  ])('loses one point for %s', (_rule, change, reason) => {
    expect(scoreCapsule(asCapsule({ ...FULL_JSON, ...change }), context)).toEqual({ score: 5, max: 6, missing: [reason] });
  });

  it('names at most five absent first files, each printable and bounded, so the reason fits the manifest (2000 characters)', () => {
    const absent = Array.from({ length: 50 }, (_, i) => `src/${'x'.repeat(970)}\u202e\n## Recover${i}.ts`);
    const [reason] = scoreCapsule(asCapsule({ ...FULL_JSON, first_files: absent }), context).missing;
    expect(reason?.length).toBeLessThanOrEqual(2000);
    expect(reason).toMatch(/ and 45 more$/);
    expect(reason).not.toMatch(/[\n\u202e]/);
  });

  it('loses one point when written before the stage that asked for it', () => {
    expect(scoreCapsule(asCapsule(FULL_JSON), { ...context, capsuleUpdatedAt: '2026-08-20T09:00:00Z' }).missing).toEqual([
      'capsule older than the stage that asked for it',
    ]);
  });

  it('does not ask for decisions when no work was done, and scores no capsule as 0', () => {
    expect(scoreCapsule(asCapsule({ ...FULL_JSON, work: {}, decisions: [], do_not_repeat: [] }), context).score).toBe(6);
    expect(scoreCapsule(null, context)).toEqual({ score: 0, max: 6, missing: ['no capsule'] });
  });

  it.each([
    ['Run `make check`', true],
    ['open src/app.ts and finish the parser', true],
    ['run the failing test again', true],
    ['pytest tests/test_api.py::test_retry', true],
    ['continue', false],
    ['finish what I was doing', false],
  ])('"%s" names a file, command or test: %s', (action, expected) => {
    expect(isActionable(action)).toBe(expected);
  });
});
