import { hookFileEdits, type HookSpec } from './hook-groups.js';

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

const EDITS = hookFileEdits(CODEX_HOOKS);

/** hooks.json with our hooks merged in as small edits (null: nothing would change); the user's bytes stay as they are. */
export const mergeCodexHooks = EDITS.merge;

/** The inverse of mergeCodexHooks (null: none of ours is there). */
export const unmergeCodexHooks = EDITS.unmerge;
