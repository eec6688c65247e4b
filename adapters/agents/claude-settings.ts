import { GUARDED_TOOLS_MATCHER } from './guarded-tools.js';
import type { HookInvocation } from './hook-commands.js';
import { claudeHookEntry, mergeHooks, removeHooks, type HookSpec } from './hook-groups.js';
import { JsonDocument } from './json-document.js';
import { CLAUDE_STATUS_LINE, mergeStatusLine, restoreStatusLine } from './status-line-setting.js';

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

export interface SettingsMerge {
  /** null when nothing would change. */
  readonly text: string | null;
  readonly notes: string[];
}

/**
 * Claude Code settings.json with our status line and hooks merged in, as small edits: every other
 * byte of the file stays as it was; running it on its own output changes nothing.
 */
export function mergeClaudeSettings(before: string | null, invocation: HookInvocation, path: string): SettingsMerge {
  const doc = new JsonDocument(before ?? '', path);
  const notes: string[] = [];
  mergeStatusLine(doc, invocation, CLAUDE_STATUS_LINE, path, notes);
  mergeHooks(doc, CLAUDE_HOOKS, invocation, claudeHookEntry, path);
  return { text: doc.result(), notes };
}

/** The inverse of mergeClaudeSettings: our status line and hooks out, every other byte as it was. */
export function unmergeClaudeSettings(before: string, path: string): SettingsMerge {
  const notes: string[] = [];
  const text = removeHooks(restoreStatusLine(before, path, CLAUDE_STATUS_LINE, notes), CLAUDE_HOOKS, path);
  return { text: text === before ? null : text, notes };
}
