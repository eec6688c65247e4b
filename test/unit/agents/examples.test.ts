import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  AGENT_INSTRUCTIONS,
  CAPSULE_COMMAND,
  COPILOT_HOOK_EDITS,
  mergeCopilotSettings,
  markedBlock,
  mergeClaudeSettings,
  mergeCodexHooks,
  mergeGeminiSettings,
  mergeQwenSettings,
} from '../../../adapters/agents/index.js';

const example = (path: string) => readFileSync(new URL(`../../../examples/${path}`, import.meta.url), 'utf8');
/** What `handoff install` writes on a machine with `handoff` on PATH and the default state dir of /home/you. */
const HANDOFF = { handoff: 'handoff', stateDir: null, spoolDir: '/home/you/.local/state/session-handoff/spool' };

describe('examples/ are what the installers write', () => {
  it('claude-code: a fresh settings.json, a chained status line, and the /handoff-capsule command', () => {
    expect(example('claude-code/settings.json')).toBe(mergeClaudeSettings(null, HANDOFF, 'settings.json').text);
    expect(example('claude-code/settings.chained.json')).toBe(mergeClaudeSettings(example('claude-code/settings.before.json'), HANDOFF, 'settings.json').text);
    expect(example('claude-code/commands/handoff-capsule.md')).toBe(CAPSULE_COMMAND);
  });

  it('codex: hooks.json with the context and session-start hooks', () => {
    expect(example('codex/hooks.json')).toBe(mergeCodexHooks(null, HANDOFF, 'hooks.json'));
  });

  it('gemini: settings.json with the guard, pickup and stage-notice hooks', () => {
    expect(example('gemini/settings.json')).toBe(mergeGeminiSettings(null, HANDOFF, 'settings.json'));
  });

  it('copilot: a hooks file of its own and the status line in its settings.json; qwen: settings.json hooks and status line', () => {
    expect(example('copilot/hooks/session-handoff.json')).toBe(COPILOT_HOOK_EDITS.merge(null, HANDOFF, 'session-handoff.json'));
    expect(example('copilot/settings.json')).toBe(mergeCopilotSettings(null, HANDOFF, 'settings.json').text);
    expect(example('qwen/settings.json')).toBe(mergeQwenSettings(null, HANDOFF, 'settings.json').text);
  });

  it.each(['codex/AGENTS.md', 'opencode/AGENTS.md', 'cline/.clinerules/session-handoff.md', 'gemini/GEMINI.md'])('%s holds the instruction block', (path) => {
    expect(example(path)).toBe(markedBlock(AGENT_INSTRUCTIONS));
  });
});
