import { chainedCommand, chainedStatusline, isOurHook, type HookInvocation, type StatusLineHook } from './hook-commands.js';
import { removeAt } from './hook-groups.js';
import { JsonDocument } from './json-document.js';

/**
 * Seconds between status line runs besides the agent's own events (`statusLine.refreshInterval`:
 * Claude Code ≥ 2.1.97, Copilot CLI): without it the line shows the stage of the last event, e.g.
 * EVACUATE long after the daemon reached HANDOFF_READY. The daemon does not count a repeated reading
 * as new evidence.
 */
export const STATUSLINE_REFRESH_SECONDS = 5;

const EDITED_BY_HAND = 'the status line command was edited by hand after install; it is left as it is';

/**
 * Our status line as edits of a settings file's `statusLine` (Claude Code and Copilot CLI share its
 * shape: type, command, padding, refreshInterval), chaining whatever command the user had and keeping
 * its other keys (padding…): a user's command is never overwritten.
 */
export function mergeStatusLine(doc: JsonDocument, invocation: HookInvocation, name: StatusLineHook, notes: string[]): void {
  const current = JsonDocument.property(doc.root, 'statusLine');
  const commandNode = current?.type === 'object' ? JsonDocument.property(current, 'command') : undefined;
  const command = JsonDocument.string(commandNode);
  const fresh = { type: 'command', command: chainedStatusline(invocation, name, null), padding: 0, refreshInterval: STATUSLINE_REFRESH_SECONDS };
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
  if (!isOurHook(command, name)) {
    notes.push(`the existing status line command is kept and chained: ${command}`);
    const type = current.type === 'object' ? JsonDocument.property(current, 'type') : undefined;
    if (type === undefined) doc.addProperties(current, [['type', 'command']]);
    else if (JsonDocument.string(type) !== 'command') doc.replace(type, 'command');
    refresh();
    doc.replace(commandNode, chainedStatusline(invocation, name, command));
    return;
  }
  const previous = chainedCommand(command, name);
  if (previous === undefined) {
    notes.push(EDITED_BY_HAND);
    return;
  }
  refresh();
  const next = chainedStatusline(invocation, name, previous);
  if (next !== command) doc.replace(commandNode, next);
}

/** Our status line taken back: the command it chained is restored, or the whole status line goes when it chained none. */
export function restoreStatusLine(text: string, path: string, name: StatusLineHook, notes: string[]): string {
  const doc = new JsonDocument(text, path);
  const current = JsonDocument.property(doc.root, 'statusLine');
  const commandNode = current?.type === 'object' ? JsonDocument.property(current, 'command') : undefined;
  const command = JsonDocument.string(commandNode);
  if (commandNode === undefined || command === null || !isOurHook(command, name)) return text;
  const previous = chainedCommand(command, name);
  if (previous === undefined) {
    notes.push(EDITED_BY_HAND);
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
