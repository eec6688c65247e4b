import { QWEN_GUARDED_TOOLS_MATCHER } from './guarded-tools.js';
import { hookFileEdits, type HookSpec } from './hook-groups.js';

/**
 * Qwen Code hooks in `~/.qwen/settings.json` (user hooks need no folder trust): Claude Code's hook
 * protocol under Claude's event names, `hookSpecificOutput.additionalContext` included, so the Claude
 * hooks serve it as they are; only the guard differs, as Qwen names its file tools by runtime id.
 */
export const QWEN_HOOKS: readonly HookSpec[] = [
  { event: 'PreToolUse', name: 'qwen-guard', matcher: QWEN_GUARDED_TOOLS_MATCHER },
  { event: 'SessionStart', name: 'claude-session-start', matcher: null },
  { event: 'UserPromptSubmit', name: 'claude-context', matcher: null },
  { event: 'PostToolUse', name: 'claude-context', matcher: null },
  // Claude's StopFailure payload (`error: "rate_limit"`); Qwen fires it for API errors in its interactive UI only, not with -p.
  { event: 'StopFailure', name: 'claude-event', matcher: 'rate_limit' },
];

/** Our hooks merged into (and taken out of) that file as small edits; every other byte stays. */
export const QWEN_HOOK_EDITS = hookFileEdits(QWEN_HOOKS);
