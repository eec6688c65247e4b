import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parse } from 'jsonc-parser';
import {
  CLAUDE_HOOKS,
  CLINE_PLUGIN_HOOKS,
  CODEX_HOOKS,
  COPILOT_HOOKS,
  GEMINI_HOOKS,
  QWEN_HOOKS,
  codexHookStates,
  codexHookTrust,
  companionTargets,
  defaultTarget,
  isOurHook,
  missingHooks,
  type CodexHookTrust,
  type HookName,
  type HookSpec,
} from '../../adapters/agents/index.js';
import { SPOOL_DIR } from '../../protocol/event-spool.js';
import type { Source } from '../../schemas/telemetry.schema.js';
import { CLINE_LOAD_STEP, clinePluginFacts } from './doctor-cline.js';
import { launcherProblem, spoolDirOf } from './hook-launcher.js';
import { isErrno } from '../store/errno.js';

/** The agents `handoff doctor` looks at: the ones whose user-wide config the installer writes. */
export const DOCTOR_AGENTS = ['claude', 'codex', 'gemini', 'opencode', 'copilot', 'qwen', 'cline'] as const;
export type DoctorAgent = (typeof DOCTOR_AGENTS)[number];

export interface HookCheck {
  readonly command: string;
  /** Why the agent could not start it, or null. */
  readonly problem: string | null;
  /** Codex only: what Codex says of the person's review of this hook. */
  readonly trust?: CodexHookTrust['trust'];
}

export interface AgentCheck {
  readonly agent: DoctorAgent;
  readonly config: string;
  /** The config holds our hooks (or, for OpenCode, our instruction block). */
  readonly installed: boolean;
  /** Installed and every hook would run: its command starts, and Codex has it trusted. */
  readonly live: boolean;
  readonly hooks: readonly HookCheck[];
  /** Hooks this version installs that the config lacks (an install by an older version), as `event (name)`. */
  readonly missing: readonly string[];
  /** The one thing a person does to make it live, or null when nothing is needed. */
  readonly step: string | null;
  /** Cline: why the agent ran without our plugin, from its own logs (absent for the others). */
  readonly problem?: string;
  /** The sources of its telemetry, and when the daemon last saw a reading of one (null: never, or no daemon). */
  readonly telemetry: { readonly sources: readonly Source[]; readonly last_seen: string | null };
}

/** What the installer writes per agent: doctor checks exactly that. */
const SPECS: Readonly<Record<DoctorAgent, readonly HookSpec[]>> = {
  claude: CLAUDE_HOOKS,
  codex: CODEX_HOOKS,
  gemini: GEMINI_HOOKS,
  opencode: [],
  copilot: COPILOT_HOOKS,
  qwen: QWEN_HOOKS,
  cline: [],
};
const namesOf = (specs: readonly HookSpec[]): HookName[] => [...new Set(specs.map((spec) => spec.name))];
const NAMES: Readonly<Record<DoctorAgent, readonly HookName[]>> = {
  claude: ['claude-statusline', ...namesOf(CLAUDE_HOOKS)],
  codex: namesOf(CODEX_HOOKS),
  gemini: namesOf(GEMINI_HOOKS),
  opencode: [],
  copilot: [...namesOf(COPILOT_HOOKS), 'copilot-statusline'],
  qwen: [...namesOf(QWEN_HOOKS), 'qwen-statusline'],
  cline: Object.values(CLINE_PLUGIN_HOOKS),
};

export const TELEMETRY_SOURCES: Readonly<Record<DoctorAgent, readonly Source[]>> = {
  claude: ['claude-statusline', 'claude-hook'],
  codex: ['codex-rollout'],
  gemini: ['gemini-telemetry'],
  opencode: [],
  copilot: ['copilot-events', 'copilot-statusline'],
  qwen: ['qwen-telemetry', 'qwen-statusline'],
  cline: [],
};

/** The status lines the installer writes besides hooks, where it keeps them (Claude Code's is found with its hooks). */
const STATUS_LINES: Partial<Record<DoctorAgent, { readonly hook: HookName; readonly key: string }>> = {
  copilot: { hook: 'copilot-statusline', key: 'statusLine' },
  qwen: { hook: 'qwen-statusline', key: 'ui.statusLine' },
};

/**
 * Copilot CLI treats a preToolUse hook that errors as a denial, and our Cline plugin refuses an edit
 * when its guard cannot start: a broken launcher there blocks every edit (other agents skip such a hook).
 */
const FAILS_CLOSED: readonly HookName[] = ['copilot-guard', 'cline-guard'];

const CODEX_REVIEW = 'start `codex` in a terminal, type `/hooks`, review the session-handoff hooks and trust them (docs/agents/codex.md)';

async function readText(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (isErrno(error, 'ENOENT', 'ENOTDIR')) return null;
    throw error;
  }
}

/** Every command string in a hooks-shaped settings file, and the status line's. */
function commandsOf(json: unknown): string[] {
  const found: string[] = [];
  const root = typeof json === 'object' && json !== null ? (json as Record<string, unknown>) : {};
  // Qwen Code keeps its status line under `ui`.
  const ui = root['ui'] as { statusLine?: { command?: unknown } } | undefined;
  for (const statusLine of [root['statusLine'] as { command?: unknown } | undefined, ui?.statusLine])
    if (typeof statusLine?.command === 'string') found.push(statusLine.command);
  const hooks = root['hooks'];
  if (typeof hooks !== 'object' || hooks === null) return found;
  for (const groups of Object.values(hooks as Record<string, unknown>)) {
    if (!Array.isArray(groups)) continue;
    for (const group of groups as { hooks?: unknown }[]) {
      if (!Array.isArray(group?.hooks)) continue;
      for (const hook of group.hooks as { command?: unknown }[]) if (typeof hook?.command === 'string') found.push(hook.command);
    }
  }
  return found;
}

export interface DoctorEnv {
  readonly env: NodeJS.ProcessEnv;
  readonly home: string;
  readonly repo: string;
  /** The state dir this CLI talks to: the one a spooling hook must write into. */
  readonly stateDir: string;
  /** Newest observed_at per source across the daemon's workspaces; null when no daemon answered. */
  readonly lastSeen: ReadonlyMap<Source, string> | null;
}

/** Why the agent could not start one of our hook commands, or null. */
function hookProblem(where: DoctorEnv): (command: string) => string | null {
  const spool = join(where.stateDir, SPOOL_DIR);
  return (command) => {
    const into = spoolDirOf(command);
    if (into !== null && into !== spool) return `it spools into ${into}, but the daemon's state dir is ${where.stateDir}`;
    const problem = launcherProblem(command, where.env);
    const blocks = problem !== null && FAILS_CLOSED.some((name) => isOurHook(command, name));
    return blocks ? `${problem}; until it starts, the agent denies every file edit` : problem;
  };
}

/**
 * Cline: its rules file is per repository and says nothing about liveness; the plugin is what guards.
 * Live when the plugin of ours is there, every command it starts would start, and Cline's logs do not
 * say it ran without it since it was written.
 */
async function checkCline(where: DoctorEnv, telemetry: AgentCheck['telemetry']): Promise<AgentCheck> {
  const config = companionTargets('cline', defaultTarget('cline', where.env, where.home, where.repo), where.env, where.home).clinePlugin ?? '';
  const facts = await clinePluginFacts(config, await readText(config), where.env, where.home);
  const base = { agent: 'cline' as const, config, missing: [], telemetry };
  if (!facts.installed) return { ...base, installed: false, live: false, hooks: [], step: '`handoff install cline`' };
  const problemOf = hookProblem(where);
  const hooks = facts.commands.map((command) => ({ command, problem: problemOf(command) }));
  const missing = NAMES.cline.filter((name) => !facts.commands.some((command) => isOurHook(command, name))).map((name) => `beforeRun/beforeTool (${name})`);
  const broken = facts.edited || hooks.some((hook) => hook.problem !== null) || missing.length > 0;
  const step = broken ? '`handoff install cline` again, so the plugin is the one this install writes' : facts.loadFailure !== null ? CLINE_LOAD_STEP : null;
  return {
    ...base,
    installed: true,
    live: !broken && facts.loadFailure === null,
    hooks,
    missing,
    step,
    ...(facts.edited ? { problem: 'the plugin was edited after install' } : facts.loadFailure !== null ? { problem: facts.loadFailure } : {}),
  };
}

/** The status line command in Copilot CLI's settings.json, as a list of none or one. */
async function copilotStatusLine(where: DoctorEnv): Promise<string[]> {
  const path = companionTargets('copilot', defaultTarget('copilot', where.env, where.home, where.repo), where.env, where.home).copilotSettings ?? '';
  const text = await readText(path);
  const command = text === null ? undefined : (parse(text) as { statusLine?: { command?: unknown } } | null)?.statusLine?.command;
  return typeof command === 'string' ? [command] : [];
}

/** What `handoff doctor` says of one agent, from its own config files (read only) and the daemon's readings. */
export async function checkAgent(agent: DoctorAgent, where: DoctorEnv): Promise<AgentCheck> {
  const { env, home } = where;
  const sources = TELEMETRY_SOURCES[agent];
  const seen = sources.map((source) => where.lastSeen?.get(source)).filter((at): at is string => at !== undefined);
  const telemetry = { sources, last_seen: seen.sort().at(-1) ?? null };
  const target = defaultTarget(agent, env, home, where.repo);
  if (agent === 'opencode') {
    const text = await readText(target);
    const installed = text?.includes('<!-- session-handoff:begin') === true;
    return { agent, config: target, installed, live: installed, hooks: [], missing: [], step: installed ? null : '`handoff install opencode`', telemetry };
  }
  if (agent === 'cline') return checkCline(where, telemetry);
  const config = agent === 'codex' ? (companionTargets('codex', target, env, home).codexHooks ?? join(dirname(target), 'hooks.json')) : target;
  const text = await readText(config);
  const json: unknown = text === null ? null : parse(text);
  // Copilot CLI: the hooks in a file of ours, the status line in its settings.json.
  const settings = agent === 'copilot' ? await copilotStatusLine(where) : null;
  const ours = [...commandsOf(json), ...(settings ?? [])].filter((command) => NAMES[agent].some((name) => isOurHook(command, name)));
  if (ours.length === 0) return { agent, config, installed: false, live: false, hooks: [], missing: [], step: `\`handoff install ${agent}\``, telemetry };
  const problemOf = hookProblem(where);
  let hooks: HookCheck[] = ours.map((command) => ({ command, problem: problemOf(command) }));
  if (agent === 'codex') {
    const toml = (await readText(join(dirname(config), 'config.toml'))) ?? '';
    const trust = codexHookTrust(json, config, codexHookStates(toml), NAMES.codex);
    hooks = trust.map((hook) => ({ command: hook.command, problem: problemOf(hook.command), trust: hook.trust }));
  }
  const missing = missingHooks(text ?? '', SPECS[agent], config).map((spec) => `${spec.event} (${spec.name})`);
  const line = STATUS_LINES[agent];
  if (line !== undefined && !ours.some((command) => isOurHook(command, line.hook))) missing.push(`${line.key} (${line.hook})`);
  const broken = hooks.some((hook) => hook.problem !== null);
  const untrusted = hooks.some((hook) => hook.trust !== undefined && hook.trust !== 'trusted');
  const step = broken
    ? `\`handoff install ${agent}\` again, so the hooks start this install`
    : missing.length > 0
      ? `\`handoff install ${agent}\` again, to add the hooks an older install did not write`
      : untrusted
        ? CODEX_REVIEW
        : null;
  return { agent, config, installed: true, live: !broken && missing.length === 0 && !untrusted, hooks, missing, step, telemetry };
}
