import type { HookInvocation } from './hook-commands.js';
import { indentOf, mergeHooks, parseJsonObject, type HookSpec, type Json } from './hook-groups.js';

/**
 * Codex hooks (`hooks.json`) speak Claude Code's hook protocol: the same `hooks` shape, the same
 * stdin fields (session_id, cwd, hook_event_name) and the same `hookSpecificOutput.additionalContext`
 * answer for SessionStart, UserPromptSubmit and PostToolUse. So the Claude hooks serve Codex as they
 * are. No PreToolUse guard: Codex edits files through `apply_patch`, whose input names no file path.
 */
const HOOKS: readonly HookSpec[] = [
  { event: 'SessionStart', name: 'claude-session-start', matcher: null },
  { event: 'UserPromptSubmit', name: 'claude-context', matcher: null },
  { event: 'PostToolUse', name: 'claude-context', matcher: null },
];

/** hooks.json with our hooks merged in (null: nothing would change); the user's hooks stay as they are. */
export function mergeCodexHooks(before: string | null, invocation: HookInvocation, path: string): string | null {
  const file = before === null || before.trim() === '' ? {} : parseJsonObject(before, path);
  const next: Json = { ...file, hooks: mergeHooks(file['hooks'], HOOKS, invocation, path) };
  if (JSON.stringify(next) === JSON.stringify(file)) return null;
  return `${JSON.stringify(next, null, before === null ? 2 : indentOf(before))}\n`;
}
