import { describe, expect, it } from 'vitest';
import { capsuleTemplate, parseCapsuleMarkdown } from '../../../protocol/index.js';

/** What `handoff capsule template` prints, line for line: the skeleton an agent fills in. */
const TEMPLATE = [
  '# Handoff capsule',
  '',
  '## Objective',
  'One or two sentences: what this work is for.',
  '',
  '## Next action',
  'Exactly one action that names a file, a command or a test, e.g. Run `npm test -- src/parser.test.ts` and fix the failing case.',
  '',
  '## Acceptance criteria',
  '- how the receiver knows the work is done',
  '',
  '## Work',
  '### Completed',
  '- ',
  '### In progress',
  '- ',
  '### Remaining',
  '- ',
  '### Blocked',
  '### Deferred',
  '',
  '## Decisions',
  '- what was decided, and why',
  '',
  '## Do not repeat',
  '- what was tried and must not be tried again',
  '',
  '## Rejected approaches',
  '## First files',
  '- src/the-file-to-open-first.ts',
  '',
  '## Scope',
  '## Out of scope',
  '## Assumptions',
  '## Risks',
  '## Do not change silently',
  '## Tools used',
  '',
];

describe('capsuleTemplate', () => {
  it('prints every heading with what belongs under it, line for line', () => {
    expect(capsuleTemplate().split('\n')).toEqual(TEMPLATE);
  });
});

describe('parseCapsuleMarkdown: what is content and what is structure', () => {
  it('only a line that starts with #s is a heading: a # inside prose is prose', () => {
    expect(parseCapsuleMarkdown('## Objective\nwrite it in C# now')).toEqual({ objective: 'write it in C# now' });
  });

  it('only a trailing colon or dot leaves a heading: one inside it is part of the name', () => {
    expect(() => parseCapsuleMarkdown('## Ris.ks\n- a')).toThrow(/unknown heading 'Ris\.ks'/);
  });

  it('a top-level heading other than the capsule title is unknown', () => {
    expect(() => parseCapsuleMarkdown('# Notes\n- a')).toThrow(/unknown heading 'Notes'/);
  });

  it('the work lists sit under their own headings; an item straight under Work belongs to none', () => {
    expect(parseCapsuleMarkdown('## Work\n- stray\n### Completed\n- a')).toEqual({ work: { completed: ['a'] } });
  });

  it("a text keeps no surrounding spaces, and a template line counts for nothing, however it's indented", () => {
    expect(parseCapsuleMarkdown('## Objective\n   the goal   ')).toEqual({ objective: 'the goal' });
    expect(parseCapsuleMarkdown('## Objective\n  One or two sentences: what this work is for.  ')).toEqual({});
  });

  it('a first file is unwrapped only when the whole item is one code span', () => {
    expect(parseCapsuleMarkdown('## First files\n- see `src/a.ts`\n- `src/b.ts` first')).toEqual({ first_files: ['see `src/a.ts`', '`src/b.ts` first'] });
  });
});
