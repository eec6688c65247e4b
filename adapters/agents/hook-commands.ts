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
  | 'gemini-context'
  | 'copilot-guard'
  | 'copilot-session-start'
  | 'copilot-context'
  | 'copilot-event'
  | 'copilot-statusline'
  | 'qwen-guard'
  | 'qwen-statusline'
  | 'cline-guard'
  | 'cline-session-start'
  | 'cline-context';

export interface HookInvocation {
  /** How the hook starts handoff: `handoff` on PATH, or e.g. `node /opt/handoff/dist/bin/handoff.js`. */
  readonly handoff: string;
  /** Baked into each command when the daemon's state dir is not the one the hook would find by itself. */
  readonly stateDir: string | null;
  /**
   * `<state dir>/spool`: when given, the claude-event hook is a shell line that spools its payload
   * there before any node starts (see spooledEventCommand).
   */
  readonly spoolDir?: string;
}

const CHAIN_FLAG = ' --chain ';

/**
 * The claude-event hook as a shell line: stdin to a dot-file in the spool, renamed to the name the
 * daemon takes (`<epoch ms>-<12 hex>.json`, daemon/ingest/event-spool.ts). Headless Claude Code kills
 * this hook about 90 ms after starting it, sooner than node itself starts on a loaded machine; cat and
 * mv take a few ms. The trailing comment names the hook, so a later install finds it as ours.
 */
export function spooledEventCommand(spoolDir: string): string {
  return `d=${shellQuote(spoolDir)}; t="$d/.$$"; umask 077; mkdir -p "$d" && cat > "$t" && mv "$t" "$d/$(date +%s)000-$(printf %012x $$).json" # handoff hook claude-event`;
}

export function hookCommand(invocation: HookInvocation, name: HookName): string {
  if (name === 'claude-event' && invocation.spoolDir !== undefined) return spooledEventCommand(invocation.spoolDir);
  const stateDir = invocation.stateDir === null ? '' : ` --state-dir ${shellQuote(invocation.stateDir)}`;
  return `${invocation.handoff} hook ${name}${stateDir}`;
}

/** The hooks an agent runs as its status line command. */
export type StatusLineHook = Extract<HookName, 'claude-statusline' | 'copilot-statusline' | 'qwen-statusline'>;

/** The status line command that also runs the user's previous one; `--chain` stays last so it can be read back. */
export function chainedStatusline(invocation: HookInvocation, name: StatusLineHook, previous: string | null): string {
  const base = hookCommand(invocation, name);
  return previous === null ? base : `${base}${CHAIN_FLAG}${shellQuote(previous)}`;
}

export function isOurHook(command: string, name: HookName): boolean {
  return new RegExp(`(^|\\s)hook\\s+${name}(\\s|$)`).test(command);
}

/**
 * The previous command chained by one of our status line commands: null when nothing is chained,
 * undefined when the command was edited into a shape we did not write (then it is left alone).
 */
export function chainedCommand(command: string, name: StatusLineHook): string | null | undefined {
  // The first flag after our hook name: the chained command may itself contain ' --chain '.
  const at = command.indexOf(CHAIN_FLAG, command.search(new RegExp(`\\shook\\s+${name}`)));
  if (at < 0) return null;
  const quoted = command.slice(at + CHAIN_FLAG.length);
  const match = /^'((?:[^']|'\\'')*)'$/.exec(quoted);
  return match?.[1] === undefined ? undefined : match[1].replaceAll("'\\''", "'");
}
