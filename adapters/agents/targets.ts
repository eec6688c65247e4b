import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { CLINE_PLUGIN_FILE } from './cline-plugin.js';
import { CAPSULE_COMMAND_FILE } from './slash-command.js';

export const AGENTS = ['claude', 'codex', 'cline', 'opencode', 'gemini', 'copilot', 'qwen'] as const;
export type Agent = (typeof AGENTS)[number];

const nonEmpty = (value: string | undefined): string | undefined => (value === undefined || value === '' ? undefined : value);

/**
 * Where each agent reads its configuration, by its own rules. Claude Code, Codex, OpenCode and
 * Gemini CLI, Copilot CLI and Qwen Code get the user-wide file: the hooks route by the session's cwd and one daemon serves
 * every repository, so one install covers them all and no tracked file of a repository changes.
 * Cline reads rules per workspace, so it gets `.clinerules` of the repository.
 */
export function defaultTarget(agent: Agent, env: NodeJS.ProcessEnv, home: string, repoRoot: string): string {
  switch (agent) {
    case 'claude':
      return join(nonEmpty(env['CLAUDE_CONFIG_DIR']) ?? join(home, '.claude'), 'settings.json');
    case 'codex':
      return join(codexHome(env, home), 'AGENTS.md');
    case 'opencode': {
      const xdg = nonEmpty(env['XDG_CONFIG_HOME']);
      return join(xdg !== undefined && isAbsolute(xdg) ? xdg : join(home, '.config'), 'opencode', 'AGENTS.md');
    }
    case 'gemini':
      return join(geminiDir(env, home), 'settings.json');
    case 'cline':
      return join(repoRoot, '.clinerules');
    case 'copilot':
      // A file of our own among the user's hook files: Copilot CLI reads every *.json there.
      return join(copilotHome(env, home), 'hooks', 'session-handoff.json');
    case 'qwen':
      return join(nonEmpty(env['QWEN_HOME']) ?? join(home, '.qwen'), 'settings.json');
  }
}

const copilotHome = (env: NodeJS.ProcessEnv, home: string): string => nonEmpty(env['COPILOT_HOME']) ?? join(home, '.copilot');

const codexHome = (env: NodeJS.ProcessEnv, home: string): string => nonEmpty(env['CODEX_HOME']) ?? join(home, '.codex');

/** Gemini CLI's user dir: `.gemini` in `$GEMINI_CLI_HOME` (its override of the home directory), else in the home. */
const geminiDir = (env: NodeJS.ProcessEnv, home: string): string => join(nonEmpty(env['GEMINI_CLI_HOME']) ?? home, '.gemini');

/** Files an install writes besides its target, each where the agent reads it. */
export interface Companions {
  /** Claude Code: the `/handoff-capsule` slash command. */
  readonly slashCommand: string | null;
  /** Codex: hooks.json with the context and session-start hooks. */
  readonly codexHooks: string | null;
  /** Gemini CLI: the GEMINI.md that gets our instructions as a marked block. */
  readonly instructions: string | null;
  /** Cline: the plugin that guards edits and gives the pickup (its rules file is the target). */
  readonly clinePlugin: string | null;
  /** Copilot CLI: the user settings.json that gets our status line (its hooks file is the target). */
  readonly copilotSettings: string | null;
}

/**
 * Claude Code reads commands from `commands/` next to its settings.json (user-wide: the config dir;
 * a project: `.claude/`), so the slash command goes beside whichever settings file was chosen. Codex
 * reads hooks.json from its home and from a project's `.codex/`: beside AGENTS.md in a Codex home,
 * else in the `.codex/` of the AGENTS.md's directory (a repository's). Gemini CLI reads GEMINI.md
 * from its user dir (`~/.gemini/GEMINI.md`) and from a project's root: beside the settings file in
 * the user dir, else in the directory that holds the project's `.gemini/`. Cline loads every plugin
 * in its config dir, whichever repository the rules file was written to. Copilot CLI takes its status
 * line from its user settings.json.
 */
export function companionTargets(agent: Agent, target: string, env: NodeJS.ProcessEnv, home: string): Companions {
  const dir = dirname(target);
  const none: Companions = { slashCommand: null, codexHooks: null, instructions: null, clinePlugin: null, copilotSettings: null };
  switch (agent) {
    case 'claude':
      return { ...none, slashCommand: join(dir, 'commands', CAPSULE_COMMAND_FILE) };
    case 'codex': {
      const inHome = resolve(dir) === resolve(codexHome(env, home)) || basename(dir) === '.codex';
      return { ...none, codexHooks: join(dir, ...(inHome ? [] : ['.codex']), 'hooks.json') };
    }
    case 'gemini': {
      const project = resolve(dir) !== resolve(geminiDir(env, home)) && basename(dir) === '.gemini';
      return { ...none, instructions: join(project ? dirname(dir) : dir, 'GEMINI.md') };
    }
    case 'cline':
      // User-wide, like the other agents' hooks: Cline reads plugins from its config dir ($CLINE_DIR, else ~/.cline).
      return { ...none, clinePlugin: join(nonEmpty(env['CLINE_DIR']) ?? join(home, '.cline'), 'plugins', CLINE_PLUGIN_FILE) };
    case 'copilot':
      // User-wide, wherever the hooks file went: Copilot reads a status line only from its user settings.
      return { ...none, copilotSettings: join(copilotHome(env, home), 'settings.json') };
    default:
      return none;
  }
}
