import type { HookInvocation } from './hook-commands.js';
import { claudeHookEntry, mergeHooks, removeHooks, type HookSpec } from './hook-groups.js';
import { JsonDocument } from './json-document.js';

/**
 * Codex hooks (`hooks.json`) speak Claude Code's hook protocol: the same `hooks` shape, the same
 * stdin fields (session_id, cwd, hook_event_name) and the same `hookSpecificOutput.additionalContext`
 * answer for SessionStart, UserPromptSubmit and PostToolUse. So the Claude hooks serve Codex as they
 * are. No PreToolUse guard: Codex edits files through `apply_patch`, whose input names no file path.
 */
export const CODEX_HOOKS: readonly HookSpec[] = [
  { event: 'SessionStart', name: 'claude-session-start', matcher: null },
  { event: 'UserPromptSubmit', name: 'claude-context', matcher: null },
  { event: 'PostToolUse', name: 'claude-context', matcher: null },
];

/** hooks.json with our hooks merged in as small edits (null: nothing would change); the user's bytes stay as they are. */
export function mergeCodexHooks(before: string | null, invocation: HookInvocation, path: string): string | null {
  const doc = new JsonDocument(before ?? '', path);
  mergeHooks(doc, CODEX_HOOKS, invocation, claudeHookEntry, path);
  return doc.result();
}

/** The inverse of mergeCodexHooks (null: none of ours is there). */
export function unmergeCodexHooks(before: string, path: string): string | null {
  const text = removeHooks(before, CODEX_HOOKS, path);
  return text === before ? null : text;
}
