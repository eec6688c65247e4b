import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, CLI, cli, startDaemon, until, type DaemonProcess } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';
import { piped, statuslinePayload } from './ingest-support.js';
import { linkedHandoffPath } from '../support/linked-handoff.js';

/**
 * Gemini CLI, the fifth agent: `handoff install gemini` and the hooks it installs, run the way Gemini
 * CLI runs them (the command through a shell, its JSON payload on stdin) against a real daemon.
 */
async function install(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const run = await piped(['install', 'gemini', ...args], '', {
    cwd: options.cwd,
    env: { HOME: tempDir('home'), HANDOFF_STATE_DIR: '', XDG_STATE_HOME: '', GEMINI_CLI_HOME: '', PATH: linkedHandoffPath(), ...options.env },
  });
  type Json = {
    code: string;
    data: { files: { path: string; action: string; backup: string | null; diff: string }[]; notes: string[] } | null;
    error?: { message: string };
  };
  return { ...run, json: (args.includes('--json') ? JSON.parse(run.stdout) : {}) as Json };
}

type Settings = { hooks: Record<string, { matcher?: string; hooks: { name: string; type: string; command: string; timeout: number }[] }[]> } & Record<
  string,
  unknown
>;

/** A BeforeTool payload as Gemini CLI writes it to a hook's stdin (hooks reference: base fields + tool_name, tool_input). */
function beforeTool(repo: string, session: string, tool: string, file = 'src/index.ts'): string {
  return JSON.stringify({
    session_id: session,
    transcript_path: join(tempDir('gemini-tmp'), 'chats', `session-${session}.json`),
    cwd: repo,
    hook_event_name: 'BeforeTool',
    timestamp: new Date().toISOString(),
    tool_name: tool,
    tool_input: tool === 'replace' ? { file_path: join(repo, file), old_string: 'a', new_string: 'b' } : { file_path: join(repo, file), content: 'x' },
  });
}

const base = (repo: string, session: string, event: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ session_id: session, transcript_path: '/tmp/t.json', cwd: repo, hook_event_name: event, timestamp: new Date().toISOString(), ...extra });

describe('handoff install gemini', () => {
  it('a project: hooks in .gemini/settings.json and the block in GEMINI.md at the root; --dry-run first; twice = once', async () => {
    const repo = tempRepo();
    mkdirSync(join(repo, '.gemini'));
    const settings = join(repo, '.gemini', 'settings.json');
    const userSettings = '{\n  // mine\n  "general": { "vimMode": true },\n  "budget": 12345678901234567890\n}\n';
    writeFileSync(settings, userSettings);
    writeFileSync(join(repo, 'GEMINI.md'), '# Project rules\n\nUse pnpm.\n');
    const gemini = join(repo, 'GEMINI.md');

    const names = readdirSync(repo).sort();
    const dry = await install(['--settings', settings, '--dry-run', '--json']);
    expect(dry.code).toBe(0);
    expect(dry.json.data?.files.map((file) => [file.path, file.action])).toEqual([
      [settings, 'updated'],
      [gemini, 'updated'],
    ]);
    expect(dry.json.data?.files[0]?.diff).toMatch(/^\+ {8}"matcher": "\^\(write_file\|replace\)\$",$/m);
    expect(readFileSync(settings, 'utf8')).toBe(userSettings);
    expect(readdirSync(repo).sort()).toEqual(names);
    expect(readdirSync(join(repo, '.gemini'))).toEqual(['settings.json']);

    const first = await install(['--settings', settings, '--json']);
    expect(first.json.data?.files.map((file) => [file.path, file.action])).toEqual([
      [settings, 'updated'],
      [gemini, 'updated'],
    ]);
    const text = readFileSync(settings, 'utf8');
    expect(text.startsWith('{\n  // mine\n  "general": { "vimMode": true },\n  "budget": 12345678901234567890,\n  "hooks": {\n')).toBe(true);
    const parsed = JSON.parse(text.replace('  // mine\n', '')) as Settings;
    expect(Object.keys(parsed.hooks)).toEqual(['BeforeTool', 'SessionStart', 'BeforeAgent', 'AfterTool']);
    expect(parsed.hooks['BeforeTool']?.[0]?.hooks[0]).toMatchObject({
      name: 'session-handoff-guard',
      type: 'command',
      command: 'handoff hook gemini-guard',
      timeout: 5000,
    });
    const md = readFileSync(gemini, 'utf8');
    expect(md.startsWith('# Project rules\n\nUse pnpm.\n\n<!-- session-handoff:begin')).toBe(true);
    expect(md).toContain('handoff drained');
    expect(readFileSync(first.json.data?.files[0]?.backup ?? '', 'utf8')).toBe(userSettings);

    const again = await install(['--settings', settings, '--json']);
    expect(again.json.data?.files.map((file) => file.action)).toEqual(['unchanged', 'unchanged']);
    expect(readFileSync(settings, 'utf8')).toBe(text);
  });

  it('user-wide by default: $GEMINI_CLI_HOME/.gemini/settings.json and GEMINI.md beside it, created', async () => {
    const home = tempDir('gemini-home');
    const run = await install(['--json'], { env: { GEMINI_CLI_HOME: home } });
    expect(run.json.data?.files).toMatchObject([
      { path: join(home, '.gemini', 'settings.json'), action: 'created', backup: null },
      { path: join(home, '.gemini', 'GEMINI.md'), action: 'created', backup: null },
    ]);
  });
});

describe('the installed Gemini CLI hooks against a real daemon', () => {
  let daemon: DaemonProcess;
  let hooks: Settings['hooks'];
  beforeAll(async () => {
    daemon = await startDaemon(undefined, { CODEX_HOME: tempDir('codex') });
    const settings = join(tempDir('gemini'), 'settings.json');
    const handoff = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)}`;
    await cli(daemon.stateDir, ['install', 'gemini', '--settings', settings, '--command', handoff, '--json']);
    hooks = (JSON.parse(readFileSync(settings, 'utf8')) as Settings).hooks;
  });
  afterAll(async () => {
    await daemon.stop();
  });

  /** Runs the installed command of an event as Gemini CLI does: through a shell, in the session's cwd, the payload on stdin. */
  const run = (event: string, cwd: string, input: string): { stdout: string } => {
    const command = hooks[event]?.[0]?.hooks[0]?.command ?? `${event} not installed`;
    // execFileSync throws on a non-zero exit: every hook must exit 0 (2 would block in Gemini CLI).
    return { stdout: execFileSync('/bin/sh', ['-c', command], { cwd, input, encoding: 'utf8', env: { ...process.env, GEMINI_PROJECT_DIR: cwd } }) };
  };
  const state = async (repo: string) => String((await cli(daemon.stateDir, ['status', '--json'], repo)).json.data?.['state']);

  it('BeforeTool: write_file and replace by a session without the lease in EVACUATE are denied with the reason; the holder and reads pass', async () => {
    const repo = tempRepo();
    await cli(daemon.stateDir, ['lease', 'acquire', '--as', 'holder-session', '--json'], repo);
    // An agent at work (its status line reading): the drain waits for its `handoff drained`, so EVACUATE stays.
    expect((await piped(['--state-dir', daemon.stateDir, 'ingest', 'claude-statusline'], statuslinePayload(repo, 50))).code).toBe(0);
    await api(daemon, 'POST', '/v1/now', { repo, reason: 'test' });
    expect(await state(repo)).toBe('EVACUATE');
    for (const tool of ['write_file', 'replace']) {
      const decision = JSON.parse(run('BeforeTool', repo, beforeTool(repo, 'gemini-session', tool)).stdout) as { decision: string; reason: string };
      expect(decision.decision).toBe('deny');
      expect(decision.reason).toMatch(/is in EVACUATE: .*This session \(gemini-session\) does not hold its lease \(the lease is held by 'holder-session'\)/);
      expect(decision.reason).toMatch(/handoff drained/);
    }
    expect(run('BeforeTool', repo, beforeTool(repo, 'holder-session', 'write_file')).stdout).toBe('{}\n');
    expect(run('BeforeTool', repo, beforeTool(repo, 'gemini-session', 'read_file')).stdout).toBe('{}\n');
  });

  it('BeforeTool in NORMAL allows, with the JSON Gemini CLI expects', async () => {
    const repo = tempRepo();
    expect(run('BeforeTool', repo, beforeTool(repo, 'any', 'write_file')).stdout).toBe('{}\n');
  });

  it('BeforeAgent and AfterTool carry the stage notice once per stage; SessionStart the pickup of a ready handoff', async () => {
    const repo = tempRepo();
    expect(run('BeforeAgent', repo, base(repo, 'g1', 'BeforeAgent', { prompt: 'go on' })).stdout).toBe('');
    await cli(daemon.stateDir, ['prepare', '--reason', 'test', '--json'], repo);
    const notice = JSON.parse(run('BeforeAgent', repo, base(repo, 'g1', 'BeforeAgent', { prompt: 'go on' })).stdout) as {
      hookSpecificOutput: { hookEventName: string; additionalContext: string };
    };
    expect(notice.hookSpecificOutput.hookEventName).toBe('BeforeAgent');
    expect(notice.hookSpecificOutput.additionalContext).toMatch(/is in PREPARE/);
    const afterTool = base(repo, 'g1', 'AfterTool', { tool_name: 'read_file', tool_input: {}, tool_response: { llmContent: 'x' } });
    expect(run('AfterTool', repo, afterTool).stdout).toBe('');

    const start = base(repo, 'receiver-1', 'SessionStart', { source: 'startup' });
    expect(run('SessionStart', repo, start).stdout).toBe('');
    await api(daemon, 'POST', '/v1/now', { repo, reason: 'test' });
    await cli(daemon.stateDir, ['drained', '--json'], repo);
    await until('HANDOFF_READY', async () => ((await state(repo)) === 'HANDOFF_READY' ? true : undefined));
    const pickup = JSON.parse(run('SessionStart', repo, start).stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    expect(pickup.hookSpecificOutput.hookEventName).toBe('SessionStart');
    expect(pickup.hookSpecificOutput.additionalContext).toMatch(/handoff accept \S+ --as receiver-1/);
  });
});
