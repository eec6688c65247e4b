import { describe, expect, it } from 'vitest';
import {
  chainedCommand,
  companionTargets,
  mergeCopilotSettings,
  mergeQwenSettings,
  planInstall,
  planUninstall,
  unmergeCopilotSettings,
  unmergeQwenSettings,
} from '../../../adapters/agents/index.js';
import type { InstallIo } from '../../../adapters/agents/index.js';

const ours = { handoff: 'handoff', stateDir: null };
const PATH = '/home/u/.copilot/settings.json';

const merged = (before: string | null) => {
  const result = mergeCopilotSettings(before, ours, PATH);
  return { ...result, json: JSON.parse(result.text ?? before ?? '{}') as { statusLine: Record<string, unknown> } & Record<string, unknown> };
};

describe('Copilot CLI settings.json: our status line', () => {
  it('a fresh file gets the status line, refreshed every 5 s, and nothing else', () => {
    expect(merged(null).json).toEqual({ statusLine: { type: 'command', command: 'handoff hook copilot-statusline', padding: 0, refreshInterval: 5 } });
  });

  it("the user's own status line command is chained, never overwritten, and uninstall gives it back byte for byte", () => {
    const before = JSON.stringify({ theme: 'dark', statusLine: { type: 'command', command: "~/bin/line.sh --mode 'full'", padding: 2 } }, null, 2);
    const { json, text, notes } = merged(before);
    expect(json['theme']).toBe('dark');
    expect(json.statusLine).toEqual({
      type: 'command',
      command: `handoff hook copilot-statusline --chain '~/bin/line.sh --mode '\\''full'\\'''`,
      padding: 2,
      refreshInterval: 5,
    });
    expect(chainedCommand(String(json.statusLine['command']), 'copilot-statusline')).toBe("~/bin/line.sh --mode 'full'");
    expect(notes).toEqual([`the existing status line command is kept and chained: ~/bin/line.sh --mode 'full'`]);
    expect(mergeCopilotSettings(text, ours, PATH).text).toBeNull();
    expect(unmergeCopilotSettings(text ?? '', PATH).text).toBe(before);
  });

  it('a Claude Code status line command of ours is a command of the user here: chained, not replaced', () => {
    const { json } = merged(JSON.stringify({ statusLine: { type: 'command', command: 'handoff hook claude-statusline' } }));
    expect(json.statusLine['command']).toBe(`handoff hook copilot-statusline --chain 'handoff hook claude-statusline'`);
  });

  it('uninstall of a status line that chained nothing takes the statusLine key out, the rest stays', () => {
    const before = JSON.stringify({ theme: 'dark' }, null, 2);
    const { text } = merged(before);
    expect(unmergeCopilotSettings(text ?? '', PATH).text).toBe(before);
  });

  it('a status line of ours edited by hand is left alone by install and uninstall', () => {
    const edited = JSON.stringify({ statusLine: { command: 'handoff hook copilot-statusline --chain "mine"' } });
    expect(merged(edited).notes[0]).toMatch(/edited by hand/);
    expect(unmergeCopilotSettings(edited, PATH)).toEqual({ text: null, notes: [expect.stringMatching(/edited by hand/)] });
  });
});

describe('install copilot plans its settings.json besides the hooks file', () => {
  const files: Record<string, string> = {};
  const io: InstallIo = {
    read: async (path) => files[path] ?? null,
    inspect: async (path) => ({ kind: path in files ? 'file' : 'missing', writable: true }),
    realpath: async (path) => path,
    repositoryOf: async () => null,
    commit: async () => expect.unreachable('planning writes nothing'),
  };

  it('in $COPILOT_HOME, wherever the hooks file goes; uninstall of a file install created removes it', async () => {
    const companions = companionTargets('copilot', '/repo/.github/hooks/x.json', { COPILOT_HOME: '/opt/cp' }, '/home/u');
    expect(companions.copilotSettings).toBe('/opt/cp/settings.json');
    const plan = await planInstall('copilot', '/opt/cp/hooks/session-handoff.json', ours, io, companions);
    expect(plan.changes.map((change) => change.path)).toEqual(['/opt/cp/hooks/session-handoff.json', '/opt/cp/settings.json']);
    files['/opt/cp/settings.json'] = plan.changes[1]?.after ?? '';
    const removal = await planUninstall('copilot', '/opt/cp/hooks/session-handoff.json', io, companions);
    expect(removal.changes[1]).toMatchObject({ path: '/opt/cp/settings.json', remove: true });
  });
});

describe('Qwen Code settings.json: our status line under ui, beside the hooks', () => {
  const QWEN = '/home/u/.qwen/settings.json';

  it('goes into an existing ui, without padding (not a Qwen key); uninstall gives the user back their file', () => {
    const before = `${JSON.stringify({ ui: { theme: 'Default', statusLine: { type: 'command', command: 'echo mine' } }, general: { vimMode: true } }, null, 2)}\n`;
    const merged = mergeQwenSettings(before, ours, QWEN);
    const json = JSON.parse(merged.text ?? '') as { ui: { statusLine: unknown; theme: string }; hooks: Record<string, unknown> };
    expect(json.ui.statusLine).toEqual({ type: 'command', command: `handoff hook qwen-statusline --chain 'echo mine'`, refreshInterval: 5 });
    expect(json.ui.theme).toBe('Default');
    expect(Object.keys(json.hooks)).toContain('PreToolUse');
    expect(mergeQwenSettings(merged.text, ours, QWEN).text).toBeNull();
    expect(unmergeQwenSettings(merged.text ?? '', QWEN).text).toBe(before);
  });

  it('adds ui when there is none, and takes it out again', () => {
    const before = `${JSON.stringify({ general: { vimMode: true } }, null, 2)}\n`;
    const merged = mergeQwenSettings(before, ours, QWEN);
    expect((JSON.parse(merged.text ?? '') as { ui: unknown }).ui).toEqual({
      statusLine: { type: 'command', command: 'handoff hook qwen-statusline', refreshInterval: 5 },
    });
    expect(unmergeQwenSettings(merged.text ?? '', QWEN).text).toBe(before);
  });

  it('refuses a ui that is not an object, naming the file', () => {
    expect(() => mergeQwenSettings('{"ui": 3}', ours, QWEN)).toThrow(/settings\.json: ui must be an object/);
  });
});
