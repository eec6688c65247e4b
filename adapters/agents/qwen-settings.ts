import { QWEN_GUARDED_TOOLS_MATCHER } from './guarded-tools.js';
import type { HookSpec } from './hook-groups.js';
import { settingsEdits } from './settings-edits.js';
import { QWEN_STATUS_LINE } from './status-line-setting.js';

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

/**
 * Our hooks and our status line (`ui.statusLine`: Qwen hands its command the context share it computes,
 * in its interactive UI only) merged into that file as small edits, and taken out again.
 */
export const { merge: mergeQwenSettings, unmerge: unmergeQwenSettings } = settingsEdits(QWEN_STATUS_LINE, QWEN_HOOKS);
