import type { SettingsMerge } from './claude-settings.js';
import { QWEN_GUARDED_TOOLS_MATCHER } from './guarded-tools.js';
import type { HookInvocation } from './hook-commands.js';
import { claudeHookEntry, mergeHooks, removeHooks, type HookSpec } from './hook-groups.js';
import { JsonDocument } from './json-document.js';
import { mergeStatusLine, QWEN_STATUS_LINE, restoreStatusLine } from './status-line-setting.js';

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
 * in its interactive UI only) merged into that file as small edits; every other byte stays, and a
 * status line command of the user's is chained, never overwritten.
 */
export function mergeQwenSettings(before: string | null, invocation: HookInvocation, path: string): SettingsMerge {
  const doc = new JsonDocument(before ?? '', path);
  const notes: string[] = [];
  mergeStatusLine(doc, invocation, QWEN_STATUS_LINE, path, notes);
  mergeHooks(doc, QWEN_HOOKS, invocation, claudeHookEntry, path);
  return { text: doc.result(), notes };
}

/** The inverse of mergeQwenSettings: our status line and hooks out, every other byte as it was. */
export function unmergeQwenSettings(before: string, path: string): SettingsMerge {
  const notes: string[] = [];
  const text = removeHooks(restoreStatusLine(before, path, QWEN_STATUS_LINE, notes), QWEN_HOOKS, path);
  return { text: text === before ? null : text, notes };
}
