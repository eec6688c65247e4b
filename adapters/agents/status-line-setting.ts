import type { Node } from 'jsonc-parser';
import { chainedCommand, chainedStatusline, isOurHook, type HookInvocation, type StatusLineHook } from './hook-commands.js';
import { removeAt } from './hook-groups.js';
import { JsonDocument, refuse, type Json } from './json-document.js';

/**
 * Seconds between status line runs besides the agent's own events (`statusLine.refreshInterval`:
 * Claude Code ≥ 2.1.97, Copilot CLI): without it the line shows the stage of the last event, e.g.
 * EVACUATE long after the daemon reached HANDOFF_READY. The daemon does not count a repeated reading
 * as new evidence.
 */
export const STATUSLINE_REFRESH_SECONDS = 5;

const EDITED_BY_HAND = 'the status line command was edited by hand after install; it is left as it is';

/** Where an agent keeps its status line, and which of its keys it knows. */
export interface StatusLineSpec {
  readonly hook: StatusLineHook;
  /** The object that holds `statusLine`: the root (Claude Code, Copilot CLI) or `ui` (Qwen Code). */
  readonly parent: readonly string[];
  /** Claude Code and Copilot CLI take `padding`; Qwen Code has no such key. */
  readonly padding: boolean;
}

export const CLAUDE_STATUS_LINE: StatusLineSpec = { hook: 'claude-statusline', parent: [], padding: true };
export const COPILOT_STATUS_LINE: StatusLineSpec = { hook: 'copilot-statusline', parent: [], padding: true };
export const QWEN_STATUS_LINE: StatusLineSpec = { hook: 'qwen-statusline', parent: ['ui'], padding: false };

/** The object that holds the status line, or what to add when there is none yet. */
function holder(doc: JsonDocument, spec: StatusLineSpec, path: string): Node | undefined {
  const node = spec.parent.length === 0 ? doc.root : doc.at(spec.parent);
  if (node !== undefined && node.type !== 'object') throw refuse(path, `${spec.parent.join('.')} must be an object`);
  return node;
}

/**
 * Our status line as edits of a settings file's `statusLine` (Claude Code and Copilot CLI share its
 * shape: type, command, padding, refreshInterval), chaining whatever command the user had and keeping
 * its other keys (padding…): a user's command is never overwritten.
 */
export function mergeStatusLine(doc: JsonDocument, invocation: HookInvocation, spec: StatusLineSpec, path: string, notes: string[]): void {
  const name = spec.hook;
  const parent = holder(doc, spec, path);
  const current = parent === undefined ? undefined : JsonDocument.property(parent, 'statusLine');
  const commandNode = current?.type === 'object' ? JsonDocument.property(current, 'command') : undefined;
  const command = JsonDocument.string(commandNode);
  const fresh: Json = {
    type: 'command',
    command: chainedStatusline(invocation, name, null),
    ...(spec.padding && { padding: 0 }),
    refreshInterval: STATUSLINE_REFRESH_SECONDS,
  };
  if (parent === undefined) {
    // Only a parent below the root can be missing: `ui` of Qwen Code.
    doc.addProperties(doc.root, [[spec.parent[0] ?? 'ui', { statusLine: fresh }]]);
    return;
  }
  if (current === undefined) {
    doc.addProperties(parent, [['statusLine', fresh]]);
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
export function restoreStatusLine(text: string, path: string, spec: StatusLineSpec, notes: string[]): string {
  const name = spec.hook;
  const doc = new JsonDocument(text, path);
  const parent = holder(doc, spec, path);
  const current = parent === undefined ? undefined : JsonDocument.property(parent, 'statusLine');
  const commandNode = current?.type === 'object' ? JsonDocument.property(current, 'command') : undefined;
  const command = JsonDocument.string(commandNode);
  if (commandNode === undefined || command === null || !isOurHook(command, name)) return text;
  const previous = chainedCommand(command, name);
  if (previous === undefined) {
    notes.push(EDITED_BY_HAND);
    return text;
  }
  if (previous === null) return withoutEmptyParent(removeAt(text, [...spec.parent, 'statusLine']), spec, path);
  notes.push(`the status line command you had before is restored: ${previous}`);
  doc.replace(commandNode, previous);
  const restored = doc.result() ?? text;
  // Install adds refreshInterval only where there was none, always this value: one that still holds
  // it is taken to be ours (a user who had set exactly 5 s before keeps the status line, not the 5).
  const line = new JsonDocument(restored, path).at([...spec.parent, 'statusLine']);
  const interval = line === undefined ? undefined : JsonDocument.property(line, 'refreshInterval');
  return interval?.value === STATUSLINE_REFRESH_SECONDS ? removeAt(restored, [...spec.parent, 'statusLine', 'refreshInterval']) : restored;
}

/**
 * A `ui` left empty goes too: install adds one when there is none, and an empty one sets nothing (a
 * `"ui": {}` the user wrote themselves would go as well, with no change to what Qwen does).
 */
function withoutEmptyParent(text: string, spec: StatusLineSpec, path: string): string {
  if (spec.parent.length === 0) return text;
  const parent = new JsonDocument(text, path).at(spec.parent);
  return parent?.type === 'object' && (parent.children ?? []).length === 0 ? removeAt(text, [...spec.parent]) : text;
}
