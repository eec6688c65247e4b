import { parse } from 'jsonc-parser';
import { describe, expect, it } from 'vitest';
import { CLAUDE_HOOKS, mergeClaudeSettings, mergeCodexHooks, mergeGeminiSettings, type HookInvocation } from '../../../adapters/agents/index.js';
import { isHandoffError } from '../../../protocol/errors.js';

const ours: HookInvocation = { handoff: 'handoff', stateDir: null };

/** Every byte of `before` is still in `after`, in order: the merge only inserted. */
function onlyInserted(before: string, after: string): boolean {
  let j = 0;
  for (const char of before) {
    j = after.indexOf(char, j);
    if (j < 0) return false;
    j += 1;
  }
  return true;
}

type Settings = { hooks: Record<string, { matcher?: string; hooks: { command: string }[] }[]> } & Record<string, unknown>;

/** The settings with every hook of ours taken out, and events left empty by that removed. */
function withoutOurs(text: string): Settings {
  const settings = parse(text) as Settings;
  const hooks = Object.entries(settings.hooks)
    .map(([event, groups]) => [event, groups.filter((group) => !group.hooks.some((hook) => / hook (claude|gemini)-/.test(hook.command)))] as const)
    .filter(([, groups]) => groups.length > 0);
  return { ...settings, hooks: Object.fromEntries(hooks) };
}

/** A hand-written settings file: comments, numbers JSON.parse would change, odd layout, the user's own hooks. */
const ODD = `// my Gemini settings, by hand
{
  "model": { "name": "gemini-2.5-pro" },   /* the one I pay for */
  "budget":   12345678901234567890,
  "ratio": 1.0, "exp": 1e3,
  "nested": {"a":[1,2,  3]},
  "hooks": {
    "BeforeTool": [
      // audit every shell command
      { "matcher": "run_shell_command", "hooks": [ { "type": "command", "command": "audit.sh", "timeout": 60000 } ] }
    ]
  },
  "ui": { "theme": "GitHub" } // trailing comment
}
`;

describe('JsonDocument through the merges: every byte outside our hooks is kept', () => {
  it('gemini: comments, 12345678901234567890, 1.0, 1e3 and the odd layout survive; only insertions', () => {
    const after = mergeGeminiSettings(ODD, ours, '/p/.gemini/settings.json') ?? '';
    expect(onlyInserted(ODD, after)).toBe(true);
    expect(withoutOurs(after)).toEqual(parse(ODD));
    for (const literal of [
      '12345678901234567890',
      '"ratio": 1.0, "exp": 1e3',
      '{"a":[1,2,  3]}',
      '/* the one I pay for */',
      '// audit every shell command',
      '// trailing comment',
    ]) {
      expect(after).toContain(literal);
    }
    const settings = parse(after) as Settings;
    expect(Object.keys(settings.hooks)).toEqual(['BeforeTool', 'SessionStart', 'BeforeAgent', 'AfterTool']);
    expect(settings.hooks['BeforeTool']?.[0]?.hooks[0]?.command).toBe('audit.sh');
    expect(mergeGeminiSettings(after, ours, '/p/.gemini/settings.json')).toBeNull();
  });

  it('claude: the same file keeps its bytes; a later install with another command replaces only our command strings', () => {
    const first = mergeClaudeSettings(ODD, ours, '/h/.claude/settings.json').text ?? '';
    expect(onlyInserted(ODD, first)).toBe(true);
    const { statusLine, ...rest } = withoutOurs(first);
    expect(statusLine).toEqual({ type: 'command', command: 'handoff hook claude-statusline', padding: 0, refreshInterval: 5 });
    expect(rest).toEqual(parse(ODD));
    const moved = mergeClaudeSettings(first, { handoff: 'node /opt/h.js', stateDir: null }, '/h/.claude/settings.json').text ?? '';
    expect(moved.length - first.length).toBe(('node /opt/h.js'.length - 'handoff'.length) * (CLAUDE_HOOKS.length + 1));
    expect(moved.replaceAll('node /opt/h.js hook', 'handoff hook')).toBe(first);
  });

  it('an inline file stays inline, tabs stay tabs, CRLF stays CRLF', () => {
    const inline = '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}, "n": 1.0}\n';
    const one = mergeCodexHooks(inline, ours, 'hooks.json') ?? '';
    expect(one.split('\n')).toHaveLength(2);
    expect(onlyInserted(inline, one)).toBe(true);

    const tabs = '{\n\t"hooks": {\n\t\t"Stop": []\n\t}\n}\n';
    const tabbed = mergeCodexHooks(tabs, ours, 'hooks.json') ?? '';
    expect(tabbed).toContain('\n\t\t"SessionStart": [\n\t\t\t{\n\t\t\t\t"hooks": [');
    expect(tabbed).not.toMatch(/\n +/);

    const crlf = '{\r\n  "model": "opus"\r\n}\r\n';
    const windows = mergeClaudeSettings(crlf, ours, 'settings.json').text ?? '';
    expect(windows.replaceAll('\r\n', '')).not.toContain('\n');
    expect(onlyInserted(crlf, windows)).toBe(true);
  });

  it('a new or blank file is written the way JSON.stringify would, two spaces and a final newline', () => {
    const created = mergeGeminiSettings(null, ours, 's.json') ?? '';
    expect(created).toBe(`${JSON.stringify(JSON.parse(created), null, 2)}\n`);
    expect(mergeGeminiSettings('  \n', ours, 's.json')).toBe(created);
    expect(mergeGeminiSettings('{}', ours, 's.json')).toBe(created.trimEnd());
  });

  it.each([
    ['a trailing comma', '{ "a": 1, }', /not valid JSON \(PropertyNameExpected at line 1, column 11\)/],
    ['an unclosed comment', '{ "a": 1 /* }', /not valid JSON/],
    ['a list', '[]', /one JSON object/],
  ])('refuses %s, saying where', (_what, text, message) => {
    try {
      mergeGeminiSettings(text, ours, '/p/settings.json');
      expect.unreachable();
    } catch (error) {
      expect(isHandoffError(error) && error.code).toBe('install_refused');
      expect((error as Error).message).toMatch(message);
    }
  });
});
