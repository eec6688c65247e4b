import { describe, expect, it } from 'vitest';
import { AGENT_INSTRUCTIONS, markedBlock, unifiedDiff, upsertMarkedBlock } from '../../../adapters/agents/index.js';

const PATH = '/repo/AGENTS.md';

describe('upsertMarkedBlock', () => {
  it('creates the block in an empty or missing file', () => {
    expect(upsertMarkedBlock(null, 'hello', PATH)).toBe(markedBlock('hello'));
    expect(upsertMarkedBlock('  \n', 'hello', PATH)).toBe(markedBlock('hello'));
  });

  it("appends after the user's text with one blank line, and replaces only the block later", () => {
    const user = '# Project rules\n\nUse tabs.';
    const first = upsertMarkedBlock(user, 'v1', PATH);
    expect(first).toBe(`${user}\n\n${markedBlock('v1')}`);
    const edited = `${first}\n## More rules\nNo force pushes.\n`;
    const second = upsertMarkedBlock(edited, 'v2', PATH);
    expect(second).toBe(`${user}\n\n${markedBlock('v2')}\n## More rules\nNo force pushes.\n`);
    expect(upsertMarkedBlock(second, 'v2', PATH)).toBe(second);
  });

  it('refuses a block whose end marker is gone rather than guess', () => {
    const broken = `${markedBlock('x').split('\n')[0]}\nsome text\n`;
    expect(() => upsertMarkedBlock(broken, 'y', PATH)).toThrow(/begin marker without its end marker/);
  });

  it('the instructions name the commands each stage asks for', () => {
    for (const command of ['handoff status', 'handoff drained', 'handoff capsule set', 'handoff accept', 'handoff verify'])
      expect(AGENT_INSTRUCTIONS).toContain(command);
  });
});

describe('unifiedDiff', () => {
  it('is empty for equal texts', () => {
    expect(unifiedDiff('f', 'a\nb\n', 'a\nb\n')).toBe('');
  });

  it('shows a new file against /dev/null', () => {
    expect(unifiedDiff('f', null, 'a\nb\n')).toBe('--- /dev/null\n+++ f\n@@ -0,0 +1,2 @@\n+a\n+b\n');
  });

  it('gives hunks with three lines of context and separate hunks for distant changes', () => {
    const before = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    const after = before.replace('line 2\n', 'line two\n').replace('line 18\n', 'line 18\nline 18b\n');
    expect(unifiedDiff('f', before, after)).toBe(
      [
        '--- f',
        '+++ f',
        '@@ -1,5 +1,5 @@',
        ' line 1',
        '-line 2',
        '+line two',
        ' line 3',
        ' line 4',
        ' line 5',
        '@@ -16,5 +16,6 @@',
        ' line 16',
        ' line 17',
        ' line 18',
        '+line 18b',
        ' line 19',
        ' line 20',
        '',
      ].join('\n'),
    );
  });
});
