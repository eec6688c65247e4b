import { GUARDED_TOOLS_MATCHER } from './guarded-tools.js';
import type { HookSpec } from './hook-groups.js';
import { settingsEdits } from './settings-edits.js';
import { CLAUDE_STATUS_LINE } from './status-line-setting.js';

export const CLAUDE_HOOKS: readonly HookSpec[] = [
  { event: 'PreToolUse', name: 'claude-guard', matcher: GUARDED_TOOLS_MATCHER },
  { event: 'SessionStart', name: 'claude-session-start', matcher: null },
  // What the stage asks of the agent: before each prompt, and after each tool call (a long turn).
  { event: 'UserPromptSubmit', name: 'claude-context', matcher: null },
  { event: 'PostToolUse', name: 'claude-context', matcher: null },
  // A stop on a rate limit is a provider near-limit warning: the daemon evacuates on it.
  { event: 'StopFailure', name: 'claude-event', matcher: 'rate_limit' },
  // Headless Claude Code may kill StopFailure before it starts but waits for SessionEnd: the daemon
  // then finds the stop in the transcript that payload names (daemon/ingest/claude-transcript-tail.ts).
  { event: 'SessionEnd', name: 'claude-event', matcher: null },
];

/** Claude Code settings.json: our status line and hooks merged in (and taken out again) as small edits. */
export const { merge: mergeClaudeSettings, unmerge: unmergeClaudeSettings } = settingsEdits(CLAUDE_STATUS_LINE, CLAUDE_HOOKS);
