import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VERSIONS, type AgentName } from './support/agent-install.js';

/** Cline is pinned for the suite's cache but has no test of its own yet, so its page claims no proof. */
const PAGES: Partial<Record<AgentName, string>> = {
  'claude-code': 'claude-code.md',
  codex: 'codex.md',
  'gemini-cli': 'gemini.md',
  opencode: 'opencode.md',
  copilot: 'copilot.md',
  'qwen-code': 'qwen.md',
};

describe('docs/agents cite the versions the suite proves', () => {
  it.each(Object.entries(PAGES))('%s: the page says "Proven with" the version in versions.json', (name, page) => {
    const text = readFileSync(new URL(`../../docs/agents/${page}`, import.meta.url), 'utf8');
    const pinned = VERSIONS[name as AgentName];
    const line = /\*\*Proven with\*\* [^\n]+\n[^\n]+/.exec(text)?.[0] ?? '';
    expect(line).toContain(` ${pinned.version} `);
    expect(line).toContain(`\`${pinned.package}\``);
  });
});
