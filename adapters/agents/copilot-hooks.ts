import type { SettingsMerge } from './claude-settings.js';
import { COPILOT_GUARDED_TOOLS_MATCHER } from './guarded-tools.js';
import type { HookInvocation } from './hook-commands.js';
import { hookFileEdits, type HookSpec } from './hook-groups.js';
import { JsonDocument } from './json-document.js';
import { COPILOT_STATUS_LINE, mergeStatusLine, restoreStatusLine } from './status-line-setting.js';

/**
 * GitHub Copilot CLI hooks (`~/.copilot/hooks/*.json`). Under PascalCase event names Copilot sends
 * Claude's snake_case payload (session_id, cwd, hook_event_name, tool_name, tool_input) and takes
 * Claude's `{hooks: {Event: [{matcher, hooks: [{type, command, timeout}]}]}}` shape. It answers
 * differently: context for the model only at the top level (`additionalContext`), and a
 * preToolUse hook that cannot run denies the call. Its SessionEnd (reason `error` after a failed
 * turn) is where the 429 its session log recorded is read.
 */
export const COPILOT_HOOKS: readonly HookSpec[] = [
  { event: 'PreToolUse', name: 'copilot-guard', matcher: COPILOT_GUARDED_TOOLS_MATCHER },
  { event: 'SessionStart', name: 'copilot-session-start', matcher: null },
  { event: 'UserPromptSubmit', name: 'copilot-context', matcher: null },
  { event: 'PostToolUse', name: 'copilot-context', matcher: null },
  { event: 'SessionEnd', name: 'copilot-event', matcher: null },
];

/** Our hooks merged into (and taken out of) that file as small edits; every other byte stays. */
export const COPILOT_HOOK_EDITS = hookFileEdits(COPILOT_HOOKS);

/**
 * Copilot CLI's user settings.json (`$COPILOT_HOME/settings.json`) with our status line merged in: the
 * only place Copilot hands out its context percentage, and only in its interactive terminal UI. Same
 * shape and the same rules as Claude Code's: a command of the user's is chained, never overwritten.
 */
export function mergeCopilotSettings(before: string | null, invocation: HookInvocation, path: string): SettingsMerge {
  const doc = new JsonDocument(before ?? '', path);
  const notes: string[] = [];
  mergeStatusLine(doc, invocation, COPILOT_STATUS_LINE, path, notes);
  return { text: doc.result(), notes };
}

/** The inverse of mergeCopilotSettings: the command it chained restored, every other byte as it was. */
export function unmergeCopilotSettings(before: string, path: string): SettingsMerge {
  const notes: string[] = [];
  const text = restoreStatusLine(before, path, COPILOT_STATUS_LINE, notes);
  return { text: text === before ? null : text, notes };
}
