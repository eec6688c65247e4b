import { GUARDED_TOOLS_MATCHER } from './guarded-tools.js';
import { chainedCommand, chainedStatusline, isOurHook, type HookInvocation } from './hook-commands.js';
import { claudeHookEntry, mergeHooks, removeAt, removeHooks, type HookSpec } from './hook-groups.js';
import { JsonDocument } from './json-document.js';

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

/**
 * Seconds between status line runs besides Claude Code's own events (`statusLine.refreshInterval`,
 * Claude Code ≥ 2.1.97): without it the line shows the stage of the last event, e.g. EVACUATE long
 * after the daemon reached HANDOFF_READY. The daemon does not count a repeated reading as new evidence.
 */
export const STATUSLINE_REFRESH_SECONDS = 5;

/** Our status line as edits, chaining whatever command the user had and keeping its other keys (padding…). */
function statusLine(doc: JsonDocument, invocation: HookInvocation, notes: string[]): void {
  const current = JsonDocument.property(doc.root, 'statusLine');
  const commandNode = current?.type === 'object' ? JsonDocument.property(current, 'command') : undefined;
  const command = JsonDocument.string(commandNode);
  const fresh = { type: 'command', command: chainedStatusline(invocation, null), padding: 0, refreshInterval: STATUSLINE_REFRESH_SECONDS };
  if (current === undefined) {
    doc.addProperties(doc.root, [['statusLine', fresh]]);
    return;
  }
  if (commandNode === undefined || command === null || command.trim() === '') {
    doc.replace(current, fresh);
    return;
  }
  // The user's own interval is kept: only a missing one is added.
  const refresh = () => {
    if (JsonDocument.property(current, 'refreshInterval') === undefined) doc.addProperties(current, [['refreshInterval', STATUSLINE_REFRESH_SECONDS]]);
  };
  if (!isOurHook(command, 'claude-statusline')) {
    notes.push(`the existing status line command is kept and chained: ${command}`);
    const type = current.type === 'object' ? JsonDocument.property(current, 'type') : undefined;
    if (type === undefined) doc.addProperties(current, [['type', 'command']]);
    else if (JsonDocument.string(type) !== 'command') doc.replace(type, 'command');
    refresh();
    doc.replace(commandNode, chainedStatusline(invocation, command));
    return;
  }
  const previous = chainedCommand(command);
  if (previous === undefined) {
    notes.push('the status line command was edited by hand after install; it is left as it is');
    return;
  }
  refresh();
  const next = chainedStatusline(invocation, previous);
  if (next !== command) doc.replace(commandNode, next);
}

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
  statusLine(doc, invocation, notes);
  mergeHooks(doc, CLAUDE_HOOKS, invocation, claudeHookEntry, path);
  return { text: doc.result(), notes };
}

/** Our status line taken back: the command it chained is restored, or the whole status line goes when it chained none. */
function restoreStatusLine(text: string, path: string, notes: string[]): string {
  const doc = new JsonDocument(text, path);
  const current = JsonDocument.property(doc.root, 'statusLine');
  const commandNode = current?.type === 'object' ? JsonDocument.property(current, 'command') : undefined;
  const command = JsonDocument.string(commandNode);
  if (commandNode === undefined || command === null || !isOurHook(command, 'claude-statusline')) return text;
  const previous = chainedCommand(command);
  if (previous === undefined) {
    notes.push('the status line command was edited by hand after install; it is left as it is');
    return text;
  }
  if (previous === null) return removeAt(text, ['statusLine']);
  notes.push(`the status line command you had before is restored: ${previous}`);
  doc.replace(commandNode, previous);
  const restored = doc.result() ?? text;
  // Install adds refreshInterval only where there was none, always this value: one that still holds
  // it is taken to be ours (a user who had set exactly 5 s before keeps the status line, not the 5).
  const line = JsonDocument.property(new JsonDocument(restored, path).root, 'statusLine');
  const interval = line === undefined ? undefined : JsonDocument.property(line, 'refreshInterval');
  return interval?.value === STATUSLINE_REFRESH_SECONDS ? removeAt(restored, ['statusLine', 'refreshInterval']) : restored;
}

/** The inverse of mergeClaudeSettings: our status line and hooks out, every other byte as it was. */
export function unmergeClaudeSettings(before: string, path: string): SettingsMerge {
  const notes: string[] = [];
  const text = removeHooks(restoreStatusLine(before, path, notes), CLAUDE_HOOKS, path);
  return { text: text === before ? null : text, notes };
}
