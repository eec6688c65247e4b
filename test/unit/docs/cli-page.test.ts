import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMAND_MODULES } from '../../../daemon/cli/program.js';

const page = readFileSync(new URL('../../../docs/cli.md', import.meta.url), 'utf8');

/**
 * Each `### \`handoff VERB\`` section of docs/cli.md, by verb, with its text up to the next heading
 * (a heading inside a printed example, such as the capsule template's, is output, not a section).
 */
function sections(): Map<string, string> {
  const found = new Map<string, string>();
  let verb: string | null = null;
  let fenced = false;
  for (const line of page.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    if (!fenced && /^#{1,3} /.test(line)) verb = /^### `handoff ([a-z-]+)`$/.exec(line)?.[1] ?? null;
    if (verb !== null) found.set(verb, `${found.get(verb) ?? ''}${line}\n`);
  }
  return found;
}

describe('docs/cli.md', () => {
  it('has a section for every verb of the CLI (COMMAND_MODULES), and none for a verb it does not have', () => {
    const verbs = COMMAND_MODULES.flatMap((module) => module.names);
    expect([...sections().keys()].sort()).toEqual([...verbs].sort());
  });

  it('each section shows a printed example, and the shape of its --json answer (the hooks print no Envelope)', () => {
    for (const [verb, text] of sections()) {
      expect(text, verb).toMatch(new RegExp(`\`\`\`console\\n\\$ handoff ${verb}\\b`));
      if (verb === 'hook') expect(text).toMatch(/no `--json`/);
      else expect(text, verb).toMatch(/^`--json`: .*`[a-z_]+`/m);
    }
  });
});
