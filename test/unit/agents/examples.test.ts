import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AGENT_INSTRUCTIONS, markedBlock, mergeClaudeSettings } from '../../../adapters/agents/index.js';

const example = (path: string) => readFileSync(new URL(`../../../examples/${path}`, import.meta.url), 'utf8');
const HANDOFF = { handoff: 'handoff', stateDir: null };

describe('examples/ are what the installers write', () => {
  it('claude-code: a fresh settings.json, and a chained status line', () => {
    expect(example('claude-code/settings.json')).toBe(mergeClaudeSettings(null, HANDOFF, 'settings.json').text);
    expect(example('claude-code/settings.chained.json')).toBe(mergeClaudeSettings(example('claude-code/settings.before.json'), HANDOFF, 'settings.json').text);
  });

  it.each(['codex/AGENTS.md', 'opencode/AGENTS.md', 'cline/.clinerules/session-handoff.md'])('%s holds the instruction block', (path) => {
    expect(example(path)).toBe(markedBlock(AGENT_INSTRUCTIONS));
  });
});
