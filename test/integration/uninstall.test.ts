import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, tempRepo } from '../support/git.js';
import { piped } from './ingest-support.js';

/** The CLI in a fresh HOME with the default state dir; every agent file lives under `root`. */
async function run(verb: 'install' | 'uninstall', args: readonly string[], home: string, cwd?: string) {
  const result = await piped([verb, ...args, '--json'], '', { cwd, env: { HOME: home, HANDOFF_STATE_DIR: '', XDG_STATE_HOME: '', CLAUDE_CONFIG_DIR: '' } });
  expect(result.code, result.stdout + result.stderr).toBe(0);
  return JSON.parse(result.stdout) as {
    data: { files: { path: string; action: string; backup: string | null; diff: string }[]; dirs_removed?: string[]; notes: string[] };
  };
}

/** Every directory under `root`, the state dir's own excepted. */
function dirs(root: string): string[] {
  const all = readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isDirectory());
  return all
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .filter((dir) => !dir.startsWith('.local'))
    .sort();
}

/** Every file under `root` but the backups install and uninstall keep, path → bytes. */
function tree(root: string): Record<string, string> {
  const files = readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && !e.name.includes('.handoff-backup-'));
  return Object.fromEntries(files.map((e) => [relative(root, join(e.parentPath, e.name)), readFileSync(join(e.parentPath, e.name), 'utf8')]));
}

const CLAUDE = `{
  // the user's own comment, and numbers as they wrote them
  "model": "opus",
  "cleanupPeriodDays": 1.0,
  "statusLine": { "type": "command", "command": "printf 'mine:%s' \\"$(head -c 8)\\"", "padding": 1 },
  "hooks": {
    "PreToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "audit.sh" }] }]
  }
}
`;

describe('handoff uninstall takes back exactly what handoff install added', () => {
  it('claude: hooks out, the chained status line restored, the slash command gone; every other byte as before', async () => {
    const home = tempDir('home');
    const dir = join(home, 'cfg');
    mkdirSync(dir);
    const settings = join(dir, 'settings.json');
    writeFileSync(settings, CLAUDE);
    const before = tree(home);
    await run('install', ['claude', '--settings', settings], home);
    expect(readFileSync(settings, 'utf8')).toContain('hook claude-guard');

    const dry = await run('uninstall', ['claude', '--settings', settings, '--dry-run'], home);
    expect(dry.data.files.map((f) => [relative(home, f.path), f.action])).toEqual([
      ['cfg/settings.json', 'updated'],
      ['cfg/commands/handoff-capsule.md', 'removed'],
    ]);
    expect(dry.data.files[0]?.diff).toMatch(/^-.*"command": ".*hook claude-session-start"/m);
    expect(dry.data.notes).toEqual([`the status line command you had before is restored: printf 'mine:%s' "$(head -c 8)"`]);

    const done = await run('uninstall', ['claude', '--settings', settings], home);
    expect(done.data.files.map((f) => f.action)).toEqual(['updated', 'removed']);
    expect(tree(home)).toEqual(before);
    // Twice = once: nothing of ours is left to take.
    expect((await run('uninstall', ['claude', '--settings', settings], home)).data.files.map((f) => f.action)).toEqual(['unchanged', 'unchanged']);
  });

  it('claude into no settings at all: uninstall leaves no file behind', async () => {
    const home = tempDir('home');
    await run('install', ['claude'], home);
    // Beside the files: the record of the directories install created, in the state dir.
    expect(Object.keys(tree(home)).sort()).toEqual([
      '.claude/commands/handoff-capsule.md',
      '.claude/settings.json',
      '.local/state/session-handoff/install-dirs.json',
    ]);
    const done = await run('uninstall', ['claude'], home);
    expect(tree(home)).toEqual({});
    // The directories install created went with the files, once empty.
    expect(done.data.dirs_removed).toEqual([join(home, '.claude/commands'), join(home, '.claude')]);
    expect(dirs(home)).toEqual([]);
  });

  it('cline: an emptied .clinerules/ install created goes; one the user had, or one with a file of theirs in it, stays', async () => {
    const home = tempDir('home');
    const repo = tempRepo();
    const rules = join(repo, '.clinerules');
    await run('install', ['cline'], home, repo);
    expect(existsSync(join(rules, 'session-handoff.md'))).toBe(true);
    // The plugin's directories in HOME were install's too (this HOME had no ~/.cline): they go with it.
    const cline = join(home, '.cline');
    const plugins = join(cline, 'plugins');
    const dry = await run('uninstall', ['cline', '--dry-run'], home, repo);
    expect([dry.data.dirs_removed, existsSync(rules)]).toEqual([[plugins, rules, cline], true]);
    const human = await piped(['uninstall', 'cline'], '', { cwd: repo, env: { HOME: home, HANDOFF_STATE_DIR: '', XDG_STATE_HOME: '' } });
    expect(human.stdout).toBe(
      [
        `removed ${join(rules, 'session-handoff.md')}`,
        `removed ${join(plugins, 'session-handoff.js')}`,
        ...[plugins, rules, cline].map((dir) => `removed the empty directory ${dir} (handoff install created it)`),
        '',
      ].join('\n'),
    );
    expect(existsSync(rules)).toBe(false);
    expect(existsSync(cline)).toBe(false);

    // Created by install, then the user put a rule of their own beside ours: kept, with their file.
    await run('install', ['cline'], home, repo);
    writeFileSync(join(rules, 'mine.md'), '# mine\n');
    expect((await run('uninstall', ['cline'], home, repo)).data.dirs_removed).not.toContain(rules);
    expect(readdirSync(rules)).toEqual(['mine.md']);

    // The user's own (empty) .clinerules/ before any install: never removed.
    const other = tempRepo();
    mkdirSync(join(other, '.clinerules'));
    await run('install', ['cline'], home, other);
    expect((await run('uninstall', ['cline'], home, other)).data.dirs_removed).not.toContain(join(other, '.clinerules'));
    expect(readdirSync(join(other, '.clinerules'))).toEqual([]);
  });

  it('codex, opencode, gemini and cline: blocks and hooks out, the user text and hooks kept, files install created removed', async () => {
    const home = tempDir('home');
    const codex = join(home, '.codex');
    mkdirSync(codex);
    writeFileSync(join(codex, 'AGENTS.md'), '# My rules\n\nAlways run the tests.\n');
    writeFileSync(join(codex, 'hooks.json'), '{\n  "hooks": {\n    "SessionStart": [{ "hooks": [{ "type": "command", "command": "mine.sh" }] }]\n  }\n}\n');
    const gemini = join(home, '.gemini');
    mkdirSync(gemini);
    writeFileSync(join(gemini, 'settings.json'), '{ "theme": "dark" }\n');
    const repo = tempRepo();
    const before = { home: tree(home), repo: tree(repo) };

    const dirsBefore = { home: dirs(home), repo: dirs(repo) };
    for (const agent of ['codex', 'opencode', 'gemini', 'cline']) await run('install', [agent], home, repo);
    expect(tree(home)).not.toEqual(before.home);
    expect(Object.keys(tree(repo))).toContain('.clinerules/session-handoff.md');
    for (const agent of ['codex', 'opencode', 'gemini', 'cline']) await run('uninstall', [agent], home, repo);
    expect(tree(home)).toEqual(before.home);
    expect(tree(repo)).toEqual(before.repo);
    // ~/.config/opencode and .clinerules were install's: gone; ~/.codex and ~/.gemini were the user's: kept.
    expect({ home: dirs(home), repo: dirs(repo) }).toEqual(dirsBefore);
  });
});
