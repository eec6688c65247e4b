import { isAbsolute, join } from 'node:path';

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
      return join(nonEmpty(env['CODEX_HOME']) ?? join(home, '.codex'), 'AGENTS.md');
    case 'opencode': {
      const xdg = nonEmpty(env['XDG_CONFIG_HOME']);
      return join(xdg !== undefined && isAbsolute(xdg) ? xdg : join(home, '.config'), 'opencode', 'AGENTS.md');
    }
    case 'cline':
      return join(repoRoot, '.clinerules');
  }
}
