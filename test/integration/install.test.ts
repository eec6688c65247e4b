import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, cli, startDaemon } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';
import { piped, statuslinePayload } from './ingest-support.js';
import { linkedHandoffPath } from '../support/linked-handoff.js';

/**
 * No daemon is needed: installers run in the CLI process. A fresh HOME with the default state dir,
 * so the hook commands need no --state-dir of their own; one HOME for the file, since the StopFailure
 * hook names the spool of that home's state dir.
 */
const HOME = tempDir('home');

async function install(args: string[], cwd?: string) {
  const run = await piped(['install', ...args], '', {
    cwd,
    env: { HOME, HANDOFF_STATE_DIR: '', XDG_STATE_HOME: '', PATH: linkedHandoffPath() },
  });
  return {
    ...run,
    json: (args.includes('--json') ? JSON.parse(run.stdout) : {}) as {
      code: string;
      data: Record<string, unknown> | null;
      error?: { message: string; hint: string };
    },
  };
}

const USER_SETTINGS = {
  model: 'opus',
  env: { ANTHROPIC_API_KEY: 'sk-do-not-lose' },
  permissions: { allow: ['Bash(npm test)'] },
  statusLine: { type: 'command', command: `printf 'mine:%s' "$(head -c 8)"`, padding: 1 },
  hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'audit.sh' }] }] },
};

function settingsFile(content: unknown = USER_SETTINGS): string {
  const dir = tempDir('claude');
  const path = join(dir, 'settings.json');
  writeFileSync(path, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600 });
  return path;
}

describe('handoff install claude', () => {
  it('merges into settings.json: user settings kept, status line chained, a backup made; twice = once', async () => {
    const path = settingsFile();
    const original = readFileSync(path, 'utf8');
    const first = await install(['claude', '--settings', path, '--json']);
    expect(first.code).toBe(0);
    const command = join(path, '..', 'commands', 'handoff-capsule.md');
    expect(first.json).toMatchObject({
      code: 'ok',
      data: {
        agent: 'claude',
        dry_run: false,
        files: [
          { path, action: 'updated' },
          { path: command, action: 'created', backup: null },
        ],
      },
    });
    const backup = (first.json.data?.['files'] as { backup: string }[])[0]?.backup ?? '';
    expect(readFileSync(backup, 'utf8')).toBe(original);
    expect(statSync(backup).mode & 0o777).toBe(0o600);
    expect(statSync(path).mode & 0o777).toBe(0o600);

    const settings = JSON.parse(readFileSync(path, 'utf8')) as typeof USER_SETTINGS & { hooks: Record<string, unknown[]> };
    expect(settings.model).toBe('opus');
    expect(settings.env).toEqual(USER_SETTINGS.env);
    expect(settings.permissions).toEqual(USER_SETTINGS.permissions);
    expect(settings.statusLine.padding).toBe(1);
    expect(settings.statusLine.command).toBe(`handoff hook claude-statusline --chain 'printf '\\''mine:%s'\\'' "$(head -c 8)"'`);
    expect(settings.hooks['PreToolUse']).toHaveLength(2);
    expect(settings.hooks['PreToolUse']?.[0]).toEqual(USER_SETTINGS.hooks.PreToolUse[0]);
    expect(Object.keys(settings.hooks)).toEqual(['PreToolUse', 'SessionStart', 'UserPromptSubmit', 'PostToolUse', 'StopFailure', 'SessionEnd']);

    const after = readFileSync(path, 'utf8');
    const second = await install(['claude', '--settings', path, '--json']);
    expect(second.json).toMatchObject({
      data: {
        files: [
          { action: 'unchanged', backup: null },
          { path: command, action: 'unchanged', backup: null },
        ],
      },
    });
    expect(readFileSync(path, 'utf8')).toBe(after);
    expect(readdirSync(join(path, '..')).filter((name) => name.includes('handoff-backup'))).toHaveLength(1);
  });

  it('--dry-run prints a unified diff and writes nothing', async () => {
    const path = settingsFile();
    const before = readFileSync(path, 'utf8');
    const run = await install(['claude', '--settings', path, '--dry-run']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`would update ${path}`);
    expect(run.stdout).toContain(`--- ${path}\n+++ ${path}\n@@ `);
    expect(run.stdout).toMatch(/^\+.*"command": "handoff hook claude-guard"/m);
    expect(run.stdout).toMatch(/^-.*"command": "printf/m);
    expect(run.stdout).toContain('note: the existing status line command is kept and chained');
    expect(readFileSync(path, 'utf8')).toBe(before);
    expect(readdirSync(join(path, '..'))).toEqual(['settings.json']);
  });

  it('refuses settings that are not JSON (65) and changes nothing', async () => {
    const dir = tempDir('claude');
    const path = join(dir, 'settings.json');
    writeFileSync(path, '{ "model": "opus", }\n');
    const run = await install(['claude', '--settings', path, '--json']);
    expect(run.code).toBe(65);
    expect(run.json.error?.message).toMatch(/settings\.json: not valid JSON/);
    expect(readFileSync(path, 'utf8')).toBe('{ "model": "opus", }\n');
    expect(readdirSync(dir)).toEqual(['settings.json']);
  });

  it('defaults to $CLAUDE_CONFIG_DIR/settings.json, creating it', () => {
    const config = tempDir('claude-config');
    const run = execFileSync(process.execPath, [CLI, '--state-dir', tempDir('s'), 'install', 'claude', '--json'], {
      env: { ...process.env, CLAUDE_CONFIG_DIR: config },
      encoding: 'utf8',
    });
    expect(JSON.parse(run)).toMatchObject({
      data: {
        files: [
          { path: join(config, 'settings.json'), action: 'created', backup: null },
          { path: join(config, 'commands', 'handoff-capsule.md'), action: 'created' },
        ],
      },
    });
  });

  it('without `npm link` the hooks start this install by absolute path, and the install says so', async () => {
    const path = settingsFile();
    const run = await piped(['install', 'claude', '--settings', path, '--json'], '', {
      env: { HOME: tempDir('home'), HANDOFF_STATE_DIR: '', XDG_STATE_HOME: '', PATH: '/nonexistent' },
    });
    expect(run.code).toBe(0);
    const launcher = `'${process.execPath}' '${realpathSync(CLI)}'`;
    const notes = (JSON.parse(run.stdout) as { data: { notes: string[] } }).data.notes;
    expect(notes[0]).toBe(
      `\`handoff\` is not on PATH: the hooks start this install directly, as ${launcher} (run \`npm link\` and install again for plain \`handoff\`)`,
    );
    const settings = JSON.parse(readFileSync(path, 'utf8')) as { hooks: Record<string, { hooks: { command: string }[] }[]> };
    const guard = settings.hooks['PreToolUse']?.at(-1)?.hooks[0]?.command ?? '';
    expect(guard).toBe(`${launcher} hook claude-guard`);
    // Run as Claude Code runs it (sh -c, an empty PATH): it answers, with a visible warning, no daemon needed.
    const answer = execFileSync('/bin/sh', ['-c', guard], {
      input: JSON.stringify({ tool_name: 'Edit', cwd: tempRepo(), tool_input: { file_path: 'a.txt' } }),
      encoding: 'utf8',
      env: { PATH: '', HANDOFF_STATE_DIR: tempDir('state'), HANDOFF_NO_AUTO_START: '1' },
    });
    expect(JSON.parse(answer)).toEqual({ systemMessage: expect.stringContaining('the lease guard is not enforcing') as unknown });
  });

  it('the installed commands work: the status line runs the chained command and reports to the daemon', async () => {
    const daemon = await startDaemon(undefined, { CODEX_HOME: tempDir('codex') });
    try {
      const path = settingsFile();
      const handoff = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)}`;
      await cli(daemon.stateDir, ['install', 'claude', '--settings', path, '--command', handoff, '--json']);
      const settings = JSON.parse(readFileSync(path, 'utf8')) as { statusLine: { command: string } };
      // The state dir of this test daemon is not the default one: the install baked it in.
      expect(settings.statusLine.command).toContain(`--state-dir '${daemon.stateDir}'`);
      const repo = tempRepo();
      const line = execFileSync('/bin/sh', ['-c', settings.statusLine.command], { input: statuslinePayload(repo, 91), encoding: 'utf8' });
      expect(line).toBe('mine:{"cwd":" | handoff EVACUATE · 5h 91% · ctx 59%\n');
    } finally {
      await daemon.stop();
    }
  });
});

describe('handoff install codex, opencode and cline', () => {
  it("codex: a marked block in $CODEX_HOME/AGENTS.md after the user's text; twice = once", async () => {
    const home = tempDir('codex-home');
    const agents = join(home, 'AGENTS.md');
    writeFileSync(agents, '# My rules\n\nAlways run the tests.\n');
    const env = { ...process.env, CODEX_HOME: home };
    const stateDir = tempDir('s');
    const run = (...extra: string[]) =>
      execFileSync(process.execPath, [CLI, '--state-dir', stateDir, 'install', 'codex', '--json', ...extra], { env, encoding: 'utf8' });
    expect(JSON.parse(run())).toMatchObject({
      data: {
        files: [
          { path: agents, action: 'updated' },
          { path: join(home, 'hooks.json'), action: 'created' },
        ],
      },
    });
    const text = readFileSync(agents, 'utf8');
    expect(text.startsWith('# My rules\n\nAlways run the tests.\n\n<!-- session-handoff:begin')).toBe(true);
    expect(text).toContain('handoff drained');
    expect(JSON.parse(run())).toMatchObject({ data: { files: [{ action: 'unchanged' }, { action: 'unchanged' }] } });
    expect(readFileSync(agents, 'utf8')).toBe(text);
  });

  it('opencode: the same block in the file given with --settings', async () => {
    const path = join(tempDir('opencode'), 'AGENTS.md');
    const first = await install(['opencode', '--settings', path, '--json']);
    expect(first.json).toMatchObject({ data: { files: [{ path, action: 'created' }] } });
    const text = readFileSync(path, 'utf8');
    await install(['opencode', '--settings', path, '--json']);
    expect(readFileSync(path, 'utf8')).toBe(text);
  });

  it("cline: a rules file of ours in the repository's .clinerules/, next to the user's rules", async () => {
    const repo = tempRepo();
    mkdirSync(join(repo, '.clinerules'));
    writeFileSync(join(repo, '.clinerules', 'style.md'), 'Use tabs.\n');
    mkdirSync(join(repo, 'src'));
    const first = await install(['cline', '--json'], join(repo, 'src'));
    const ours = join(repo, '.clinerules', 'session-handoff.md');
    const plugin = join(HOME, '.cline', 'plugins', 'session-handoff.js');
    expect(first.json).toMatchObject({
      data: {
        files: [
          { path: ours, action: 'created' },
          { path: plugin, action: 'created' },
        ],
      },
    });
    expect(readFileSync(join(repo, '.clinerules', 'style.md'), 'utf8')).toBe('Use tabs.\n');
    const text = readFileSync(ours, 'utf8');
    expect((await install(['cline', '--json'], repo)).json).toMatchObject({ data: { files: [{ action: 'unchanged' }, { action: 'unchanged' }] } });
    expect(readFileSync(ours, 'utf8')).toBe(text);
    expect(readFileSync(plugin, 'utf8')).toContain('hook cline-guard');
  });

  it("cline: a single .clinerules file gets the block, the user's rules kept", async () => {
    const repo = tempRepo();
    writeFileSync(join(repo, '.clinerules'), 'Never touch migrations.\n');
    await install(['cline', '--json'], repo);
    const text = readFileSync(join(repo, '.clinerules'), 'utf8');
    expect(text.startsWith('Never touch migrations.\n\n<!-- session-handoff:begin')).toBe(true);
  });

  it('an unknown agent is a usage error (64)', async () => {
    const run = await install(['aider', '--json']);
    expect(run.code).toBe(64);
    expect(run.json.error?.hint).toMatch(/claude, codex, cline, opencode, gemini/);
  });
});
