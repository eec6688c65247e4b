import { shellQuote } from '../../protocol/shell-quote.js';

/** The `handoff hook NAME` commands the installer writes; the CLI's hook entry is keyed by the same. */
export type HookName =
  | 'claude-statusline'
  | 'claude-guard'
  | 'claude-session-start'
  | 'claude-context'
  | 'claude-event'
  | 'gemini-guard'
  | 'gemini-session-start'
  | 'gemini-context';

export interface HookInvocation {
  /** How the hook starts handoff: `handoff` on PATH, or e.g. `node /opt/handoff/dist/daemon/cli/main.js`. */
  readonly handoff: string;
  /** Baked into each command when the daemon's state dir is not the one the hook would find by itself. */
  readonly stateDir: string | null;
}

const CHAIN_FLAG = ' --chain ';

export function hookCommand(invocation: HookInvocation, name: HookName): string {
  const stateDir = invocation.stateDir === null ? '' : ` --state-dir ${shellQuote(invocation.stateDir)}`;
  return `${invocation.handoff} hook ${name}${stateDir}`;
}

/** The status line command that also runs the user's previous one; `--chain` stays last so it can be read back. */
export function chainedStatusline(invocation: HookInvocation, previous: string | null): string {
  const base = hookCommand(invocation, 'claude-statusline');
  return previous === null ? base : `${base}${CHAIN_FLAG}${shellQuote(previous)}`;
}

export function isOurHook(command: string, name: HookName): boolean {
  return new RegExp(`(^|\\s)hook\\s+${name}(\\s|$)`).test(command);
}

/**
 * The previous command chained by one of our status line commands: null when nothing is chained,
 * undefined when the command was edited into a shape we did not write (then it is left alone).
 */
export function chainedCommand(command: string): string | null | undefined {
  // The first flag after our hook name: the chained command may itself contain ' --chain '.
  const at = command.indexOf(CHAIN_FLAG, command.search(/\shook\s+claude-statusline/));
  if (at < 0) return null;
  const quoted = command.slice(at + CHAIN_FLAG.length);
  const match = /^'((?:[^']|'\\'')*)'$/.exec(quoted);
  return match?.[1] === undefined ? undefined : match[1].replaceAll("'\\''", "'");
}
