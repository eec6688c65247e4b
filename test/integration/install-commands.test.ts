import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENT_INSTRUCTIONS, CAPSULE_COMMAND, markedBlock } from '../../adapters/agents/index.js';
import { contextText, type ContextFacts, type ContextKind } from '../../protocol/index.js';
import { CLI } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';
import { linkedHandoffPath } from '../support/linked-handoff.js';

/**
 * Runs `handoff install …` as a user would: a fresh home with the default state dir (so the hook
 * commands carry no --state-dir; one for the file, as the StopFailure hook names its state dir's spool),
 * the agents' config dirs from the env.
 */
const HOME = tempDir('home');

function install(args: readonly string[], env: NodeJS.ProcessEnv, cwd?: string) {
  const out = execFileSync(process.execPath, [CLI, 'install', ...args, '--json'], {
    cwd,
    env: { ...process.env, HOME, HANDOFF_STATE_DIR: '', XDG_STATE_HOME: '', PATH: linkedHandoffPath(), ...env },
    encoding: 'utf8',
  });
  return JSON.parse(out) as { data: { files: { path: string; action: string; backup: string | null }[] } };
}

/**
 * Every `handoff …` command a text tells an agent to run: inline code spans and the lines of code
 * blocks, cut where a shell operator begins (`<<`, `|`, `;`, `&&`, ` > `).
 */
function handoffCommands(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(/`(handoff [^`]+)`/g)) found.add(match[1] ?? '');
  for (const block of text.matchAll(/```[a-z]*\n([\s\S]*?)```/g)) {
    for (const line of (block[1] ?? '').split('\n')) if (line.trim().startsWith('handoff ')) found.add(line.trim());
  }
  return [...found].map((command) => (command.split(/ <<| \| |; | && | > /)[0] ?? '').trim());
}

interface HelpRun {
  readonly command: string;
  readonly code: number;
  readonly usage: string;
}

function runHelp(command: string): Promise<HelpRun> {
  const args = command.split(/\s+/).slice(1);
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args, '--help'], { encoding: 'utf8', timeout: 20_000 }, (error, stdout) => {
      resolve({ command, code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, usage: /^Usage: .*$/m.exec(stdout)?.[0] ?? '' });
    });
  });
}

/**
 * A real command: `--help` exits 0 and prints the usage of that very command, not the program's or
 * a parent's (commander prints those for a word it does not know, and still exits 0).
 */
async function expectRealCommands(commands: readonly string[]): Promise<void> {
  expect(commands.length).toBeGreaterThan(0);
  for (const run of await Promise.all(commands.map(runHelp))) {
    const what = `${run.command} → ${run.usage}`;
    expect(run.code, what).toBe(0);
    const path = /^Usage: handoff ((?:[a-z]+ )*?)(?:\[options\]|<|\[)/.exec(run.usage)?.[1]?.trim() ?? '';
    expect(path, what).not.toBe('');
    expect(`${run.command} `.startsWith(`handoff ${path} `), what).toBe(true);
    // A command with subcommands shows its own usage for a word it does not know: none may follow.
    const next = run.command.slice(`handoff ${path}`.length).trim().split(/\s+/)[0] ?? '';
    if (run.usage.includes('[command]')) expect(next === '' || /^[-<]/.test(next), what).toBe(true);
  }
}

describe('the slash command and the AGENTS.md blocks', () => {
  it('claude: /handoff-capsule is installed beside settings.json, idempotently', () => {
    const config = tempDir('claude-config');
    const env = { CLAUDE_CONFIG_DIR: config };
    const command = join(config, 'commands', 'handoff-capsule.md');
    expect(install(['claude'], env).data.files).toEqual([
      expect.objectContaining({ path: join(config, 'settings.json'), action: 'created' }),
      expect.objectContaining({ path: command, action: 'created', backup: null }),
    ]);
    expect(readFileSync(command, 'utf8')).toBe(CAPSULE_COMMAND);
    const settings = readFileSync(join(config, 'settings.json'), 'utf8');
    expect(install(['claude'], env).data.files.map((f) => f.action)).toEqual(['unchanged', 'unchanged']);
    expect(readFileSync(command, 'utf8')).toBe(CAPSULE_COMMAND);
    expect(readFileSync(join(config, 'settings.json'), 'utf8')).toBe(settings);
    expect(readdirSync(join(config, 'commands'))).toEqual(['handoff-capsule.md']);
    const hooks = (JSON.parse(settings) as { hooks: Record<string, { hooks: { command: string }[] }[]> }).hooks;
    for (const event of ['UserPromptSubmit', 'PostToolUse']) expect(hooks[event]?.[0]?.hooks[0]?.command).toBe('handoff hook claude-context');
  });

  it('codex: the AGENTS.md block and hooks.json, idempotently; opencode and cline: the block', () => {
    const home = tempDir('codex-home');
    expect(install(['codex'], { CODEX_HOME: home }).data.files.map((f) => [f.path, f.action])).toEqual([
      [join(home, 'AGENTS.md'), 'created'],
      [join(home, 'hooks.json'), 'created'],
    ]);
    expect(install(['codex'], { CODEX_HOME: home }).data.files.map((f) => f.action)).toEqual(['unchanged', 'unchanged']);
    expect(readFileSync(join(home, 'AGENTS.md'), 'utf8')).toBe(markedBlock(AGENT_INSTRUCTIONS));
    expect(readFileSync(join(home, 'hooks.json'), 'utf8')).toContain('"command": "handoff hook claude-context"');

    const xdg = tempDir('xdg');
    install(['opencode'], { XDG_CONFIG_HOME: xdg });
    expect(install(['opencode'], { XDG_CONFIG_HOME: xdg }).data.files.map((f) => f.action)).toEqual(['unchanged']);
    expect(readFileSync(join(xdg, 'opencode', 'AGENTS.md'), 'utf8')).toBe(markedBlock(AGENT_INSTRUCTIONS));

    const repo = tempRepo();
    mkdirSync(join(repo, '.clinerules'));
    install(['cline'], {}, repo);
    expect(readFileSync(join(repo, '.clinerules', 'session-handoff.md'), 'utf8')).toBe(markedBlock(AGENT_INSTRUCTIONS));
  });

  it('the block explains each stage and receiving a handoff', () => {
    for (const part of [
      '**PREPARE**',
      '**EVACUATE**',
      'HANDOFF_READY',
      'Receiving a handoff',
      '`handoff drained`',
      '`handoff capsule set --file FILE`',
      '`handoff accept <cycle> --as <session-id>`',
      '`handoff return`',
    ]) {
      expect(AGENT_INSTRUCTIONS).toContain(part);
    }
    for (const part of ['`handoff capsule template`', 'handoff capsule set <<', 'Next action', '$ARGUMENTS']) expect(CAPSULE_COMMAND).toContain(part);
  });

  it('name only real commands: every `handoff …` line in them runs with --help', async () => {
    const installed = [CAPSULE_COMMAND, AGENT_INSTRUCTIONS];
    const commands = [...new Set(installed.flatMap(handoffCommands))];
    expect(commands).toEqual(
      expect.arrayContaining([
        'handoff capsule template',
        'handoff capsule set',
        'handoff drained',
        'handoff accept <cycle> --as <session-id>',
        'handoff verify <cycle>',
      ]),
    );
    await expectRealCommands(commands);
  });

  it('the check itself refuses made-up commands', async () => {
    for (const made of ['handoff nonsense', 'handoff capsule refresh', 'handoff lease grab --as me'])
      await expect(expectRealCommands([made]), made).rejects.toThrow();
  });

  it('so do the stage notices the hooks inject', async () => {
    const facts = (kind: ContextKind): ContextFacts => ({
      workspace: '/repo',
      session: 's-1',
      view: {
        state: kind === 'evacuate' ? 'EVACUATE' : kind === 'frozen' ? 'HANDOFF_READY' : 'PREPARE',
        stage: 'x',
        returning: false,
        paused: false,
        holder: null,
        capsuleFresh: false,
      },
      cycle: '20261129T081500Z-k3f9qa',
      pressure: null,
      quality: { score: 0, max: 6, missing: ['no capsule'] },
      toolCalls: 20,
      handoffPath: null,
    });
    const texts = (['prepare', 'reminder', 'evacuate', 'frozen'] as const).map((kind) => contextText(kind, facts(kind)));
    texts.push(contextText('frozen', { ...facts('frozen'), view: { ...facts('frozen').view, state: 'RETURN_HANDOFF_READY' } }));
    texts.push(contextText('frozen', { ...facts('frozen'), view: { ...facts('frozen').view, state: 'TAKEOVER', holder: 'them' } }));
    await expectRealCommands([...new Set(texts.flatMap(handoffCommands))]);
  });
});
