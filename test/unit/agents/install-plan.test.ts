import { describe, expect, it } from 'vitest';
import {
  AGENT_INSTRUCTIONS,
  CAPSULE_COMMAND,
  companionTargets,
  markedBlock,
  mergeCodexHooks,
  planInstall,
  type InstallIo,
} from '../../../adapters/agents/index.js';
import { isHandoffError } from '../../../protocol/errors.js';

const ours = { handoff: 'handoff', stateDir: null };

/** The file system as a map of regular files outside any repository: what the plan reads; writing is not part of planning. */
function memoryIo(files: Record<string, string> = {}): InstallIo {
  return {
    read: async (path) => files[path] ?? null,
    inspect: async (path) => ({ kind: path in files ? 'file' : 'missing', writable: true }),
    realpath: async (path) => path,
    repositoryOf: async () => null,
    commit: async () => expect.unreachable('planning writes nothing'),
  };
}

describe('companionTargets', () => {
  const home = '/home/u';

  it('claude: the slash command beside the settings file it merges into', () => {
    expect(companionTargets('claude', '/home/u/.claude/settings.json', {}, home).slashCommand).toBe('/home/u/.claude/commands/handoff-capsule.md');
    expect(companionTargets('claude', '/cfg/settings.json', { CLAUDE_CONFIG_DIR: '/cfg' }, home).slashCommand).toBe('/cfg/commands/handoff-capsule.md');
    expect(companionTargets('claude', '/repo/.claude/settings.json', {}, home).slashCommand).toBe('/repo/.claude/commands/handoff-capsule.md');
  });

  it('codex: hooks.json in the Codex home, or in the .codex/ of a repository', () => {
    expect(companionTargets('codex', '/home/u/.codex/AGENTS.md', {}, home).codexHooks).toBe('/home/u/.codex/hooks.json');
    expect(companionTargets('codex', '/opt/ch/AGENTS.md', { CODEX_HOME: '/opt/ch' }, home).codexHooks).toBe('/opt/ch/hooks.json');
    expect(companionTargets('codex', '/repo/AGENTS.md', {}, home).codexHooks).toBe('/repo/.codex/hooks.json');
  });

  it('opencode: none', () => {
    expect(companionTargets('opencode', '/x/AGENTS.md', {}, home)).toEqual({
      slashCommand: null,
      codexHooks: null,
      instructions: null,
      clinePlugin: null,
      copilotSettings: null,
    });
  });

  it('cline: the plugin in its config dir ($CLINE_DIR, else ~/.cline), whichever repository the rules go to', () => {
    expect(companionTargets('cline', '/repo/.clinerules', {}, home).clinePlugin).toBe('/home/u/.cline/plugins/session-handoff.js');
    expect(companionTargets('cline', '/repo/.clinerules', { CLINE_DIR: '/opt/cline' }, home).clinePlugin).toBe('/opt/cline/plugins/session-handoff.js');
  });
});

describe('planInstall', () => {
  it('claude: settings and the slash command; nothing to change the second time', async () => {
    const companions = companionTargets('claude', '/c/settings.json', {}, '/h');
    const plan = await planInstall('claude', '/c/settings.json', ours, memoryIo(), companions);
    expect(plan.changes.map((c) => [c.path, c.before === null, c.after !== null])).toEqual([
      ['/c/settings.json', true, true],
      ['/c/commands/handoff-capsule.md', true, true],
    ]);
    const installed = Object.fromEntries(plan.changes.map((c) => [c.path, c.after ?? '']));
    const again = await planInstall('claude', '/c/settings.json', ours, memoryIo(installed), companions);
    expect(again.changes.every((c) => c.after === null)).toBe(true);
  });

  it('claude: a slash command edited by hand is rewritten (the installer keeps the previous version as a backup)', async () => {
    const companions = companionTargets('claude', '/c/settings.json', {}, '/h');
    const plan = await planInstall('claude', '/c/settings.json', ours, memoryIo({ '/c/commands/handoff-capsule.md': 'mine\n' }), companions);
    expect(plan.changes[1]).toEqual({
      path: '/c/commands/handoff-capsule.md',
      writePath: '/c/commands/handoff-capsule.md',
      before: 'mine\n',
      after: CAPSULE_COMMAND,
    });
  });

  it("codex: the AGENTS.md block and hooks.json merged with the user's own hooks", async () => {
    const companions = companionTargets('codex', '/h/.codex/AGENTS.md', {}, '/h');
    const userHooks = JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'notify.sh' }] }] } }, null, 4);
    const plan = await planInstall('codex', '/h/.codex/AGENTS.md', ours, memoryIo({ '/h/.codex/hooks.json': userHooks }), companions);
    expect(plan.changes[0]?.after).toBe(markedBlock(AGENT_INSTRUCTIONS));
    const hooks = JSON.parse(plan.changes[1]?.after ?? '{}') as { hooks: Record<string, unknown[]> };
    expect(Object.keys(hooks.hooks)).toEqual(['Stop', 'SessionStart', 'UserPromptSubmit', 'PostToolUse']);
    expect(hooks.hooks['Stop']).toEqual([{ hooks: [{ type: 'command', command: 'notify.sh' }] }]);
    expect(plan.changes[1]?.after).toContain('\n    "hooks"');
  });
});

describe('mergeCodexHooks', () => {
  it('is idempotent and updates our commands in place', () => {
    const first = mergeCodexHooks(null, ours, 'hooks.json');
    expect(mergeCodexHooks(first, ours, 'hooks.json')).toBeNull();
    const moved = mergeCodexHooks(first, { handoff: 'node /opt/h/main.js', stateDir: '/s' }, 'hooks.json') ?? '';
    expect(moved.match(/node \/opt\/h\/main\.js hook claude-context --state-dir '\/s'/g)).toHaveLength(2);
    expect(moved).not.toMatch(/"handoff hook/);
  });

  it('refuses a hooks.json that is not JSON, naming it', () => {
    try {
      mergeCodexHooks('{ "hooks": ', ours, '/h/.codex/hooks.json');
      expect.unreachable();
    } catch (error) {
      expect(isHandoffError(error) && error.code).toBe('install_refused');
      expect((error as Error).message).toMatch(/\/h\/\.codex\/hooks\.json: not valid JSON/);
    }
  });
});
