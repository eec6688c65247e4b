import { COPILOT_GUARDED_TOOLS_MATCHER } from './guarded-tools.js';
import { hookFileEdits, type HookSpec } from './hook-groups.js';
import { settingsEdits } from './settings-edits.js';
import { COPILOT_STATUS_LINE } from './status-line-setting.js';

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
export const { merge: mergeCopilotSettings, unmerge: unmergeCopilotSettings } = settingsEdits(COPILOT_STATUS_LINE, []);
