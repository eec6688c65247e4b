import type { Node } from 'jsonc-parser';
import { hookCommand, isOurHook, type HookInvocation, type HookName } from './hook-commands.js';
import { JsonDocument, refuse, type Json } from './json-document.js';

/** One of our hooks in an agent's `hooks` object (Claude Code settings.json, Codex hooks.json, Gemini CLI settings.json: one shape). */
export interface HookSpec {
  readonly event: string;
  readonly name: HookName;
  /** null: no matcher, so every tool / source matches. */
  readonly matcher: string | null;
}

/** What one hook entry says besides its command: the agents differ (Claude Code's timeout is in seconds, Gemini CLI's in ms and it names hooks). */
export type HookEntry = (spec: HookSpec, command: string) => Json;

/** Seconds Claude Code and Codex wait for a hook; ours answer in well under one. */
const HOOK_TIMEOUT_SECONDS = 5;

export const claudeHookEntry: HookEntry = (_spec, command) => ({ type: 'command', command, timeout: HOOK_TIMEOUT_SECONDS });

/** The command nodes of our hook in an event's list of groups. */
function ourHooks(list: Node, spec: HookSpec): { node: Node; command: string }[] {
  const found: { node: Node; command: string }[] = [];
  for (const group of list.children ?? []) {
    if (group.type !== 'object') continue;
    const hooks = JsonDocument.property(group, 'hooks');
    if (hooks?.type !== 'array') continue;
    for (const hook of hooks.children ?? []) {
      if (hook.type !== 'object') continue;
      const node = JsonDocument.property(hook, 'command');
      const command = JsonDocument.string(node);
      if (node !== undefined && command !== null && isOurHook(command, spec.name)) found.push({ node, command });
    }
  }
  return found;
}

/**
 * Our hooks merged into the document's `hooks` object as edits: our command updated where it already
 * is, else one group appended to the event's list, else the event added. Every hook and matcher of
 * the user stays as it was, byte for byte.
 */
export function mergeHooks(doc: JsonDocument, specs: readonly HookSpec[], invocation: HookInvocation, entry: HookEntry, path: string): void {
  const groupOf = (spec: HookSpec): Json => {
    const hook = entry(spec, hookCommand(invocation, spec.name));
    return spec.matcher === null ? { hooks: [hook] } : { matcher: spec.matcher, hooks: [hook] };
  };
  const hooks = JsonDocument.property(doc.root, 'hooks');
  if (hooks === undefined) {
    const events: Json = {};
    for (const spec of specs) events[spec.event] = [...((events[spec.event] as Json[] | undefined) ?? []), groupOf(spec)];
    doc.addProperties(doc.root, [['hooks', events]]);
    return;
  }
  if (hooks.type !== 'object') throw refuse(path, 'hooks must be an object');
  const newEvents = new Map<string, Json[]>();
  const appended = new Map<Node, Json[]>();
  for (const spec of specs) {
    const list = JsonDocument.property(hooks, spec.event);
    if (list === undefined) {
      newEvents.set(spec.event, [...(newEvents.get(spec.event) ?? []), groupOf(spec)]);
      continue;
    }
    if (list.type !== 'array') throw refuse(path, `hooks.${spec.event} must be an array`);
    const found = ourHooks(list, spec);
    const command = hookCommand(invocation, spec.name);
    for (const hook of found) if (hook.command !== command) doc.replace(hook.node, command);
    if (found.length === 0) appended.set(list, [...(appended.get(list) ?? []), groupOf(spec)]);
  }
  for (const [list, groups] of appended) doc.addElements(list, groups);
  doc.addProperties(hooks, [...newEvents]);
}
