import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { CAPSULE_COMMAND_FILE } from './slash-command.js';

export const AGENTS = ['claude', 'codex', 'cline', 'opencode'] as const;
export type Agent = (typeof AGENTS)[number];

const nonEmpty = (value: string | undefined): string | undefined => (value === undefined || value === '' ? undefined : value);

/**
 * Where each agent reads its configuration, by its own rules. Claude Code, Codex and OpenCode get the
 * user-wide file: the hooks route by the session's cwd and one daemon serves every repository, so one
 * install covers them all and no tracked file of a repository changes. Cline reads rules per
 * workspace, so it gets `.clinerules` of the repository.
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
    case 'cline':
      return join(repoRoot, '.clinerules');
  }
}

const codexHome = (env: NodeJS.ProcessEnv, home: string): string => nonEmpty(env['CODEX_HOME']) ?? join(home, '.codex');

/** Files an install writes besides its target, each where the agent reads it. */
export interface Companions {
  /** Claude Code: the `/handoff-capsule` slash command. */
  readonly slashCommand: string | null;
  /** Codex: hooks.json with the context and session-start hooks. */
  readonly codexHooks: string | null;
}

/**
 * Claude Code reads commands from `commands/` next to its settings.json (user-wide: the config dir;
 * a project: `.claude/`), so the slash command goes beside whichever settings file was chosen. Codex
 * reads hooks.json from its home and from a project's `.codex/`: beside AGENTS.md in a Codex home,
 * else in the `.codex/` of the AGENTS.md's directory (a repository's).
 */
export function companionTargets(agent: Agent, target: string, env: NodeJS.ProcessEnv, home: string): Companions {
  const dir = dirname(target);
  switch (agent) {
    case 'claude':
      return { slashCommand: join(dir, 'commands', CAPSULE_COMMAND_FILE), codexHooks: null };
    case 'codex': {
      const inHome = resolve(dir) === resolve(codexHome(env, home)) || basename(dir) === '.codex';
      return { slashCommand: null, codexHooks: join(dir, ...(inHome ? [] : ['.codex']), 'hooks.json') };
    }
    default:
      return { slashCommand: null, codexHooks: null };
  }
}
