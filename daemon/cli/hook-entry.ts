import { resolve } from 'node:path';
import type { HookName } from '../../adapters/agents/hook-commands.js';
import { hookStateDir } from './hooks/daemon-address.js';
import type { HookContext } from './hooks/hook-context.js';

type Hook = (ctx: HookContext) => Promise<void>;

/**
 * The agent hooks, by the names the installer writes (HookName is a type-only import). Loaded by the
 * CLI entry before commander and the protocol, so a hook pays only for node, its own few small
 * modules and one loopback request. Every hook exits 0 and prints what its agent expects even when
 * the daemon is gone: a broken hook must never break the agent.
 */
const HOOKS: Readonly<Record<HookName, () => Promise<Hook>>> = {
  'claude-statusline': async () => (await import('./hooks/statusline.js')).statuslineHook,
  'claude-guard': async () => (await import('./hooks/guard.js')).guardHook,
  'claude-session-start': async () => (await import('./hooks/session-start.js')).sessionStartHook,
  'claude-context': async () => (await import('./hooks/context.js')).contextHook,
  'claude-event': async () => (await import('./hooks/event.js')).eventHook,
  // Gemini CLI: its own decision format for the guard and the pickup; the notices share Claude's answer.
  'gemini-guard': async () => (await import('./hooks/guard.js')).geminiGuardHook,
  'gemini-session-start': async () => (await import('./hooks/session-start-json.js')).geminiSessionStartHook,
  'gemini-context': async () => (await import('./hooks/context.js')).contextHook,
  // Copilot CLI: Claude's payloads, its own answers (top-level fields); its 429 from its session log, its context % from its status line.
  'copilot-guard': async () => (await import('./hooks/guard.js')).copilotGuardHook,
  'copilot-session-start': async () => (await import('./hooks/session-start-json.js')).copilotSessionStartHook,
  'copilot-context': async () => (await import('./hooks/context.js')).copilotContextHook,
  'copilot-event': async () => (await import('./hooks/copilot-event.js')).copilotEventHook,
  'copilot-statusline': async () => (await import('./hooks/statusline.js')).copilotStatuslineHook,
  // Qwen Code: Claude's protocol (its session-start and context hooks serve it); only the tool ids differ.
  'qwen-guard': async () => (await import('./hooks/guard.js')).qwenGuardHook,
  'qwen-statusline': async () => (await import('./hooks/statusline.js')).qwenStatuslineHook,
  // Cline: our plugin starts these (Claude's payloads) and hands their answers to Cline as its own.
  'cline-guard': async () => (await import('./hooks/guard.js')).clineGuardHook,
  'cline-session-start': async () => (await import('./hooks/session-start-json.js')).clineSessionStartHook,
  'cline-context': async () => (await import('./hooks/context.js')).clineContextHook,
};

/** What a hook prints when it fails unexpectedly: still the shape its agent expects. */
const GUARD_FAILED = JSON.stringify({ systemMessage: 'handoff: the lease guard failed; it is not enforcing' });
const FALLBACK: Partial<Record<HookName, string>> = {
  'claude-statusline': 'handoff: hook failed',
  'copilot-statusline': 'handoff: hook failed',
  'qwen-statusline': 'handoff: hook failed',
  'claude-guard': GUARD_FAILED,
  'gemini-guard': GUARD_FAILED,
  'copilot-guard': GUARD_FAILED,
  'qwen-guard': GUARD_FAILED,
  'cline-guard': GUARD_FAILED,
};

export const HOOK_USAGE = `usage: handoff hook (${Object.keys(HOOKS).join(' | ')}) [--state-dir DIR] [--chain COMMAND]`;

const isHookName = (name: string): name is HookName => Object.hasOwn(HOOKS, name);

export interface HookOptions {
  readonly name: string;
  readonly stateDir?: string | undefined;
  readonly chain?: string | undefined;
}

/** `NAME [--state-dir DIR] [--chain CMD]` (also `--flag=value`): all a hook takes, parsed without commander. */
export function parseHookArgs(argv: readonly string[]): HookOptions | string {
  const [name, ...rest] = argv;
  if (name === undefined || name.startsWith('-')) return 'name the hook';
  const flags: Record<string, string> = {};
  for (let i = 0; i < rest.length; i += 1) {
    const arg = rest[i] ?? '';
    const [flag, inline] = arg.split(/=(.*)/s, 2);
    if (flag !== '--state-dir' && flag !== '--chain') return `unknown argument '${arg}'`;
    const value = inline ?? rest[++i];
    if (value === undefined) return `${flag} needs a value`;
    flags[flag] = value;
  }
  return { name, stateDir: flags['--state-dir'], chain: flags['--chain'] };
}

export async function runHook(options: HookOptions): Promise<number> {
  const { name } = options;
  if (!isHookName(name)) {
    process.stderr.write(`handoff: no hook '${options.name}'\n${HOOK_USAGE}\n`);
    return 64;
  }
  const ctx: HookContext = {
    stateDir: resolve(options.stateDir ?? hookStateDir(process.env)),
    chain: options.chain ?? null,
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
  };
  try {
    await (
      await HOOKS[name]()
    )(ctx);
  } catch (error) {
    ctx.err(`handoff: hook ${options.name} failed: ${(error as Error).message}`);
    const fallback = FALLBACK[name];
    if (fallback !== undefined) ctx.out(fallback);
  }
  return 0;
}

/** The fast path of the CLI entry: `handoff hook …` arguments after `hook`. */
export async function runHookArgs(argv: readonly string[]): Promise<number> {
  const options = parseHookArgs(argv);
  if (typeof options === 'string') {
    process.stderr.write(`handoff: ${options}\n${HOOK_USAGE}\n`);
    return 64;
  }
  return runHook(options);
}
