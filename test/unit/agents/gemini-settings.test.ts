import { describe, expect, it } from 'vitest';
import {
  companionTargets,
  defaultTarget,
  GEMINI_GUARDED_TOOLS,
  mergeGeminiSettings,
  unifiedDiff,
  type HookInvocation,
} from '../../../adapters/agents/index.js';

const ours: HookInvocation = { handoff: 'handoff', stateDir: null };

type Settings = { hooks: Record<string, { matcher?: string; hooks: Record<string, unknown>[] }[]> } & Record<string, unknown>;
const merged = (before: string | null, invocation = ours) => mergeGeminiSettings(before, invocation, '/h/.gemini/settings.json');

const entry = (command: string, name: string, description: string) => ({ name, type: 'command', command, timeout: 5000, description });

describe('mergeGeminiSettings', () => {
  it('into no file: the guard on BeforeTool for the file tools, the pickup on SessionStart, the notices on BeforeAgent and AfterTool', () => {
    const settings = JSON.parse(merged(null) ?? '{}') as Settings;
    expect(settings).toEqual({
      hooks: {
        BeforeTool: [
          {
            matcher: '^(write_file|replace)$',
            hooks: [
              entry('handoff hook gemini-guard', 'session-handoff-guard', 'session-handoff: refuses file edits to a session that does not hold the lease'),
            ],
          },
        ],
        SessionStart: [
          { hooks: [entry('handoff hook gemini-session-start', 'session-handoff-pickup', 'session-handoff: what a ready handoff asks of a new session')] },
        ],
        BeforeAgent: [
          { hooks: [entry('handoff hook gemini-context', 'session-handoff-stage', 'session-handoff: what the current stage asks of this session')] },
        ],
        AfterTool: [{ hooks: [entry('handoff hook gemini-context', 'session-handoff-stage', 'session-handoff: what the current stage asks of this session')] }],
      },
    });
    // Gemini CLI's matcher is a regular expression over the tool name: exactly its file tools.
    const matcher = new RegExp(settings.hooks['BeforeTool']?.[0]?.matcher ?? '');
    expect(GEMINI_GUARDED_TOOLS.every((tool) => matcher.test(tool))).toBe(true);
    expect(['run_shell_command', 'read_file', 'mcp__fs__replace_all', 'write_file_x'].some((tool) => matcher.test(tool))).toBe(false);
  });

  it("keeps the user's settings, hooks and the hooksConfig switch; idempotent; a new command replaces ours in place", () => {
    const before = JSON.stringify(
      {
        general: { vimMode: true },
        hooksConfig: { enabled: true, disabled: ['noisy'] },
        hooks: {
          BeforeTool: [{ matcher: 'run_shell_command', hooks: [{ type: 'command', command: 'audit.sh' }] }],
          SessionEnd: [{ hooks: [{ type: 'command', command: 'bye.sh' }] }],
        },
      },
      null,
      2,
    );
    const first = merged(before) ?? '';
    const settings = JSON.parse(first) as Settings;
    expect(settings['general']).toEqual({ vimMode: true });
    expect(settings['hooksConfig']).toEqual({ enabled: true, disabled: ['noisy'] });
    expect(settings.hooks['BeforeTool']?.map((group) => group.matcher)).toEqual(['run_shell_command', '^(write_file|replace)$']);
    expect(settings.hooks['SessionEnd']).toEqual([{ hooks: [{ type: 'command', command: 'bye.sh' }] }]);
    expect(merged(first)).toBeNull();
    const moved = merged(first, { handoff: 'node /opt/h/main.js', stateDir: '/s' }) ?? '';
    expect(moved.match(/node \/opt\/h\/main\.js hook gemini-context --state-dir '\/s'/g)).toHaveLength(2);
    expect(moved.replaceAll(" --state-dir '/s'", '').replaceAll('node /opt/h/main.js hook', 'handoff hook')).toBe(first);
  });
});

describe('the installer diff (what --dry-run prints)', () => {
  it("one line of the user's changes (it gains the comma before our group); every other line is added, and ours", () => {
    const before =
      '{\n  "theme": "GitHub",\n  "hooks": {\n    "SessionStart": [\n      { "hooks": [ { "type": "command", "command": "hello.sh" } ] }\n    ]\n  }\n}\n';
    const diff = unifiedDiff('.gemini/settings.json', before, merged(before) ?? '');
    const lines = diff.trimEnd().split('\n');
    expect(lines.slice(0, 7)).toEqual([
      '--- .gemini/settings.json',
      '+++ .gemini/settings.json',
      '@@ -2,7 +2,58 @@',
      '   "theme": "GitHub",',
      '   "hooks": {',
      '     "SessionStart": [',
      '-      { "hooks": [ { "type": "command", "command": "hello.sh" } ] }',
    ]);
    expect(lines[7]).toBe('+      { "hooks": [ { "type": "command", "command": "hello.sh" } ] },');
    expect(lines.slice(-3)).toEqual(['     ]', '   }', ' }']);
    const added = lines.slice(8, -3);
    expect(added.every((line) => line.startsWith('+'))).toBe(true);
    const ours = JSON.parse(`{"hooks":{"SessionStart":[${added.map((line) => line.slice(1)).join('\n')}]}}`) as Settings;
    expect(Object.keys(ours.hooks)).toEqual(['SessionStart', 'BeforeTool', 'BeforeAgent', 'AfterTool']);
    expect(
      Object.values(ours.hooks)
        .flat()
        .flatMap((group) => group.hooks.map((hook) => hook['command'])),
    ).toEqual(['handoff hook gemini-session-start', 'handoff hook gemini-guard', 'handoff hook gemini-context', 'handoff hook gemini-context']);
  });
});

describe('gemini targets', () => {
  it('user-wide: ~/.gemini/settings.json and ~/.gemini/GEMINI.md; $GEMINI_CLI_HOME moves the home', () => {
    expect(defaultTarget('gemini', {}, '/home/u', '/repo')).toBe('/home/u/.gemini/settings.json');
    expect(defaultTarget('gemini', { GEMINI_CLI_HOME: '/profiles/work' }, '/home/u', '/repo')).toBe('/profiles/work/.gemini/settings.json');
    expect(companionTargets('gemini', '/home/u/.gemini/settings.json', {}, '/home/u').instructions).toBe('/home/u/.gemini/GEMINI.md');
  });

  it('a project: .gemini/settings.json, and GEMINI.md at the project root', () => {
    expect(companionTargets('gemini', '/repo/.gemini/settings.json', {}, '/home/u')).toEqual({
      slashCommand: null,
      codexHooks: null,
      clinePlugin: null,
      copilotSettings: null,
      instructions: '/repo/GEMINI.md',
    });
    expect(companionTargets('gemini', '/elsewhere/settings.json', {}, '/home/u').instructions).toBe('/elsewhere/GEMINI.md');
  });
});
