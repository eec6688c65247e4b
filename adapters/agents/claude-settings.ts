import { GUARDED_TOOLS_MATCHER } from './guarded-tools.js';
import { chainedCommand, chainedStatusline, isOurHook, type HookInvocation } from './hook-commands.js';
import { indentOf, isObject, mergeHooks, parseJsonObject, type HookSpec, type Json } from './hook-groups.js';

const HOOKS: readonly HookSpec[] = [
  { event: 'PreToolUse', name: 'claude-guard', matcher: GUARDED_TOOLS_MATCHER },
  { event: 'SessionStart', name: 'claude-session-start', matcher: null },
  // What the stage asks of the agent: before each prompt, and after each tool call (a long turn).
  { event: 'UserPromptSubmit', name: 'claude-context', matcher: null },
  { event: 'PostToolUse', name: 'claude-context', matcher: null },
  // A stop on a rate limit is a provider near-limit warning: the daemon evacuates on it.
  { event: 'StopFailure', name: 'claude-event', matcher: 'rate_limit' },
];

/** Our status line, chaining whatever command the user had, and keeping its other keys (padding…). */
function statusLine(current: unknown, invocation: HookInvocation, notes: string[]): Json {
  if (!isObject(current) || typeof current['command'] !== 'string' || current['command'].trim() === '') {
    return { type: 'command', command: chainedStatusline(invocation, null), padding: 0 };
  }
  const command = current['command'];
  if (!isOurHook(command, 'claude-statusline')) {
    notes.push(`the existing status line command is kept and chained: ${command}`);
    return { ...current, type: 'command', command: chainedStatusline(invocation, command) };
  }
  const previous = chainedCommand(command);
  if (previous === undefined) {
    notes.push('the status line command was edited by hand after install; it is left as it is');
    return current;
  }
  return { ...current, command: chainedStatusline(invocation, previous) };
}

export interface SettingsMerge {
  /** null when nothing would change. */
  readonly text: string | null;
  readonly notes: string[];
}

/**
 * Claude Code settings.json with our status line and hooks merged in. Every other key, hook and
 * matcher of the user stays as it was; running it on its own output changes nothing.
 */
export function mergeClaudeSettings(before: string | null, invocation: HookInvocation, path: string): SettingsMerge {
  const settings = before === null || before.trim() === '' ? {} : parseJsonObject(before, path);
  const notes: string[] = [];
  const hooks = mergeHooks(settings['hooks'], HOOKS, invocation, path);
  const next: Json = { ...settings, statusLine: statusLine(settings['statusLine'], invocation, notes), hooks };
  if (JSON.stringify(next) === JSON.stringify(settings)) return { text: null, notes };
  return { text: `${JSON.stringify(next, null, before === null ? 2 : indentOf(before))}\n`, notes };
}
