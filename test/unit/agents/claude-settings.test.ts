import { describe, expect, it } from 'vitest';
import { chainedCommand, chainedStatusline, GUARDED_TOOLS_MATCHER, mergeClaudeSettings, type HookInvocation } from '../../../adapters/agents/index.js';
import { isHandoffError } from '../../../protocol/errors.js';

const ours: HookInvocation = { handoff: 'handoff', stateDir: null };
const PATH = '/home/me/.claude/settings.json';

const merged = (before: string | null, invocation = ours) => {
  const { text, notes } = mergeClaudeSettings(before, invocation, PATH);
  return {
    text,
    notes,
    json: JSON.parse(text ?? before ?? '{}') as Record<string, unknown> & {
      statusLine: { command: string; padding?: number };
      hooks: Record<string, { matcher?: string; hooks: { command: string; timeout?: number }[] }[]>;
    },
  };
};

describe('mergeClaudeSettings', () => {
  it("the status line refreshes on a timer too: an interval is added where none is, the user's own is kept", () => {
    const installedBefore = JSON.stringify({ statusLine: { type: 'command', command: 'handoff hook claude-statusline', padding: 0 } });
    expect(merged(installedBefore).json.statusLine).toEqual({ type: 'command', command: 'handoff hook claude-statusline', padding: 0, refreshInterval: 5 });
    const own = JSON.stringify({ statusLine: { type: 'command', command: 'mine', refreshInterval: 30 } });
    expect(merged(own).json.statusLine).toEqual({ type: 'command', command: "handoff hook claude-statusline --chain 'mine'", refreshInterval: 30 });
    const once = merged(own).text;
    expect(merged(once).text).toBeNull();
  });

  it('into no file: our status line and the guard, session-start, rate-limit and session-end hooks', () => {
    const { json } = merged(null);
    expect(json.statusLine).toEqual({ type: 'command', command: 'handoff hook claude-statusline', padding: 0, refreshInterval: 5 });
    expect(json.hooks['PreToolUse']).toEqual([
      { matcher: GUARDED_TOOLS_MATCHER, hooks: [{ type: 'command', command: 'handoff hook claude-guard', timeout: 5 }] },
    ]);
    expect(json.hooks['SessionStart']).toEqual([{ hooks: [{ type: 'command', command: 'handoff hook claude-session-start', timeout: 5 }] }]);
    expect(json.hooks['StopFailure']).toEqual([{ matcher: 'rate_limit', hooks: [{ type: 'command', command: 'handoff hook claude-event', timeout: 5 }] }]);
    // Headless Claude Code waits for SessionEnd, not for StopFailure: the daemon reads the stop from the transcript.
    expect(json.hooks['SessionEnd']).toEqual([{ hooks: [{ type: 'command', command: 'handoff hook claude-event', timeout: 5 }] }]);
    // The stage notices: before every prompt and after every tool call, whatever the tool.
    for (const event of ['UserPromptSubmit', 'PostToolUse']) {
      expect(json.hooks[event]).toEqual([{ hooks: [{ type: 'command', command: 'handoff hook claude-context', timeout: 5 }] }]);
    }
    expect(Object.keys(json.hooks)).toEqual(['PreToolUse', 'SessionStart', 'UserPromptSubmit', 'PostToolUse', 'StopFailure', 'SessionEnd']);
  });

  it("adds the context hook beside the user's own PostToolUse hooks, once", () => {
    const before = JSON.stringify({ hooks: { PostToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: 'prettier --write' }] }] } });
    const { json, text } = merged(before);
    expect(json.hooks['PostToolUse']).toEqual([
      { matcher: 'Write', hooks: [{ type: 'command', command: 'prettier --write' }] },
      { hooks: [{ type: 'command', command: 'handoff hook claude-context', timeout: 5 }] },
    ]);
    expect(mergeClaudeSettings(text, ours, PATH).text).toBeNull();
  });

  it('keeps every other setting and hook, chains the existing status line and keeps its keys', () => {
    const before = JSON.stringify(
      {
        model: 'opus',
        env: { API: 'x' },
        statusLine: { type: 'command', command: "~/bin/line.sh --mode 'full'", padding: 2, refreshInterval: 5 },
        hooks: {
          PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'audit.sh' }] }],
          Stop: [{ hooks: [{ type: 'command', command: 'notify' }] }],
        },
      },
      null,
      4,
    );
    const { json, notes } = merged(before);
    expect(json['model']).toBe('opus');
    expect(json['env']).toEqual({ API: 'x' });
    expect(json.statusLine).toEqual({
      type: 'command',
      command: `handoff hook claude-statusline --chain '~/bin/line.sh --mode '\\''full'\\'''`,
      padding: 2,
      refreshInterval: 5,
    });
    expect(chainedCommand(json.statusLine.command, 'claude-statusline')).toBe("~/bin/line.sh --mode 'full'");
    expect(json.hooks['PreToolUse']?.[0]).toEqual({ matcher: 'Bash', hooks: [{ type: 'command', command: 'audit.sh' }] });
    expect(json.hooks['Stop']).toEqual([{ hooks: [{ type: 'command', command: 'notify' }] }]);
    expect(notes).toEqual([`the existing status line command is kept and chained: ~/bin/line.sh --mode 'full'`]);
  });

  it("is idempotent: on its own output it changes nothing, and keeps the file's indentation", () => {
    const first = merged(JSON.stringify({ statusLine: { type: 'command', command: 'mine' } }, null, '\t')).text;
    expect(first).toContain('\n\t"statusLine"');
    expect(mergeClaudeSettings(first, ours, PATH).text).toBeNull();
  });

  it('a second install with other options updates our commands in place, the chain kept', () => {
    const first = merged(JSON.stringify({ statusLine: { type: 'command', command: 'mine' } })).text;
    const { json } = merged(first, { handoff: 'node /opt/h/main.js', stateDir: "/tmp/it's state" });
    expect(json.statusLine.command).toBe(`node /opt/h/main.js hook claude-statusline --state-dir '/tmp/it'\\''s state' --chain 'mine'`);
    expect(json.hooks['PreToolUse']).toHaveLength(1);
    expect(json.hooks['PreToolUse']?.[0]?.hooks[0]?.command).toBe(`node /opt/h/main.js hook claude-guard --state-dir '/tmp/it'\\''s state'`);
  });

  it('a status line of ours that was edited by hand is left alone', () => {
    const edited = JSON.stringify({ statusLine: { type: 'command', command: 'handoff hook claude-statusline --chain "mine"' } });
    const { json, notes } = merged(edited);
    expect(json.statusLine.command).toBe('handoff hook claude-statusline --chain "mine"');
    expect(notes[0]).toMatch(/edited by hand/);
  });

  it.each([
    ['not JSON', '{ "model": ', /not valid JSON/],
    ['not an object', '[1, 2]', /one JSON object/],
    ['hooks of the wrong type', '{"hooks": []}', /hooks must be an object/],
    ['an event that is not a list', '{"hooks": {"SessionStart": {}}}', /hooks\.SessionStart must be an array/],
  ])('refuses settings that are %s, naming the file', (_what, text, message) => {
    try {
      mergeClaudeSettings(text, ours, PATH);
      expect.unreachable();
    } catch (error) {
      expect(isHandoffError(error) && error.code).toBe('install_refused');
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).toContain(PATH);
    }
  });
});

describe('chainedStatusline and chainedCommand', () => {
  it.each(['simple', "with 'quotes'", 'a --chain inside', 'pipes | and $VARS && ~/x'])('round-trips %s', (previous) => {
    const command = chainedStatusline(ours, 'claude-statusline', previous);
    expect(chainedCommand(command, 'claude-statusline')).toBe(previous);
  });

  it('says null when nothing is chained', () => {
    expect(chainedCommand(chainedStatusline(ours, 'claude-statusline', null), 'claude-statusline')).toBeNull();
  });
});
