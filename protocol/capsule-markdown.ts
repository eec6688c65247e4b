/** The capsule's Markdown form: the manifest's headings, lists as `- item`, text as paragraphs. */
const LISTS = {
  'acceptance criteria': 'acceptance_criteria',
  scope: 'scope',
  'out of scope': 'out_of_scope',
  decisions: 'decisions',
  assumptions: 'assumptions',
  'rejected approaches': 'rejected_approaches',
  'do not repeat': 'do_not_repeat',
  'first files': 'first_files',
  risks: 'risks',
  'do not change silently': 'do_not_change_silently',
  'tools used': 'tools_used',
} as const;
const WORK = { completed: 'completed', 'in progress': 'in_progress', remaining: 'remaining', blocked: 'blocked', deferred: 'deferred' } as const;
const TEXTS = { objective: 'objective', 'next action': 'next_action' } as const;

type ListKey = (typeof LISTS)[keyof typeof LISTS];
type WorkKey = (typeof WORK)[keyof typeof WORK];

/** Template lines left as they are must not count as content. */
const TEMPLATE_PLACEHOLDERS: ReadonlySet<string> = new Set([
  '',
  'One or two sentences: what this work is for.',
  'Exactly one action that names a file, a command or a test, e.g. Run `npm test -- src/parser.test.ts` and fix the failing case.',
  'how the receiver knows the work is done',
  'what was decided, and why',
  'what was tried and must not be tried again',
  'src/the-file-to-open-first.ts',
]);

const normal = (heading: string) => heading.trim().toLowerCase().replace(/[:.]$/, '').replace(/[_-]/g, ' ').replace(/\s+/g, ' ');
const ITEM = /^\s*(?:[-*+]|\d+[.)])\s+(.*)$/;

/**
 * Parses a Markdown capsule into the capsule's JSON shape (not yet validated: the schema does that).
 * Unknown headings are an error, so a typo never silently drops a section.
 */
export function parseCapsuleMarkdown(text: string): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  const work: Partial<Record<WorkKey, string[]>> = {};
  const lists: Partial<Record<ListKey, string[]>> = {};
  let section:
    | { kind: 'list'; key: ListKey }
    | { kind: 'work'; key: WorkKey }
    | { kind: 'text'; key: 'objective' | 'next_action'; lines: string[] }
    | { kind: 'work-parent' }
    | null = null;
  const flushText = () => {
    if (section?.kind === 'text') {
      const value = section.lines.join('\n').trim();
      if (value !== '') result[section.key] = value;
    }
  };
  for (const raw of text.split(/\r?\n/)) {
    const heading = /^(#{1,6})\s+(.*)$/.exec(raw);
    if (heading) {
      flushText();
      // Stryker disable next-line StringLiteral: the heading pattern's second group always matches; `??` only narrows the type
      const name = normal(heading[2] ?? '');
      if (name in LISTS) section = { kind: 'list', key: LISTS[name as keyof typeof LISTS] };
      else if (name in WORK) section = { kind: 'work', key: WORK[name as keyof typeof WORK] };
      else if (name in TEXTS) section = { kind: 'text', key: TEXTS[name as keyof typeof TEXTS], lines: [] };
      else if (name === 'work') section = { kind: 'work-parent' };
      else if (heading[1] === '#' && (name === 'capsule' || name.startsWith('handoff capsule'))) section = null;
      else throw new Error(`unknown heading '${heading[2] ?? ''}': use the headings of \`handoff capsule template\``);
      continue;
    }
    if (section === null || section.kind === 'work-parent') continue;
    if (section.kind === 'text') {
      if (!TEMPLATE_PLACEHOLDERS.has(raw.trim())) section.lines.push(raw);
      continue;
    }
    // Stryker disable next-line OptionalChaining: ITEM's group always matches when ITEM does; the second `?.` only narrows the type
    let item = ITEM.exec(raw)?.[1]?.trim();
    if (item === undefined || TEMPLATE_PLACEHOLDERS.has(item)) continue;
    // A path is a path: `src/a.ts` and src/a.ts name the same first file.
    // Stryker disable next-line ConditionalExpression: no work list is keyed first_files; the kind test only narrows the type
    if (section.kind === 'list' && section.key === 'first_files') item = item.replace(/^`([^`]+)`$/, '$1');
    const list = section.kind === 'list' ? (lists[section.key] ??= []) : (work[section.key] ??= []);
    list.push(item);
  }
  flushText();
  Object.assign(result, lists);
  if (Object.keys(work).length > 0) result['work'] = work;
  return result;
}

/** The skeleton `handoff capsule template` prints: every heading, with what belongs under it. */
export function capsuleTemplate(): string {
  return [
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
  ].join('\n');
}
