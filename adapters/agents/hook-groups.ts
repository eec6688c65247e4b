import { findNodeAtLocation, parseTree, type JSONPath, type Node } from 'jsonc-parser';
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

/**
 * The hooks of `specs` the document lacks (event and name), e.g. one a newer version installs and an
 * older install never wrote: `handoff doctor` names them, `handoff install` again adds them.
 */
export function missingHooks(text: string, specs: readonly HookSpec[], path: string): HookSpec[] {
  const hooks = new JsonDocument(text, path).at(['hooks']);
  return specs.filter((spec) => {
    const list = hooks?.type === 'object' ? JsonDocument.property(hooks, spec.event) : undefined;
    return list?.type !== 'array' || ourHooks(list, spec).length === 0;
  });
}

/**
 * The text without the value at `at` (a property or an element, with the comma and the line break
 * that joined it to its neighbour): the exact inverse of an append by JsonDocument. jsonc-parser's
 * own `modify(…, undefined)` is not used: it reformats the container and can leave it unparseable
 * (an inline array of objects), so the cut is computed from the parse tree here.
 */
export function removeAt(text: string, at: JSONPath): string {
  const value = findNodeAtLocation(parseTree(text, [], { allowTrailingComma: false, disallowComments: false }) as Node, at);
  const child = value?.parent?.type === 'property' ? value.parent : value;
  const siblings = child?.parent?.children ?? [];
  const i = child === undefined ? -1 : siblings.indexOf(child);
  const container = child?.parent;
  if (child === undefined || container === undefined || i < 0) return text;
  const end = (node: Node) => node.offset + node.length;
  const [from, to] =
    siblings.length === 1
      ? [container.offset + 1, end(container) - 1]
      : i < siblings.length - 1
        ? [child.offset, (siblings[i + 1] as Node).offset]
        : [end(siblings[i - 1] as Node), end(child)];
  return text.slice(0, from) + text.slice(to);
}

/** Where the next of our hooks is: the whole group when it holds ours alone (the group install appended), else the hook. */
function nextOurs(doc: JsonDocument, event: string, names: readonly HookName[]): JSONPath | undefined {
  const list = JsonDocument.property(doc.root, 'hooks');
  const groups = list?.type === 'object' ? JsonDocument.property(list, event) : undefined;
  for (const [g, group] of (groups?.type === 'array' ? (groups.children ?? []) : []).entries()) {
    const hooks = group.type === 'object' ? JsonDocument.property(group, 'hooks') : undefined;
    for (const [h, hook] of (hooks?.type === 'array' ? (hooks.children ?? []) : []).entries()) {
      const command = JsonDocument.string(hook.type === 'object' ? JsonDocument.property(hook, 'command') : undefined);
      if (command !== null && names.some((name) => isOurHook(command, name)))
        return hooks?.children?.length === 1 ? ['hooks', event, g] : ['hooks', event, g, 'hooks', h];
    }
  }
  return undefined;
}

/**
 * The inverse of mergeHooks: every hook of ours goes, with the group, the event list and the `hooks`
 * object it leaves empty (install added those); every hook of the user stays, byte for byte. One
 * removal per parse: jsonc-parser's edits are computed on the text as it is.
 */
export function removeHooks(before: string, specs: readonly HookSpec[], path: string): string {
  let text = before;
  for (const event of new Set(specs.map((spec) => spec.event))) {
    const names = specs.filter((spec) => spec.event === event).map((spec) => spec.name);
    let removed = false;
    for (let at = nextOurs(new JsonDocument(text, path), event, names); at !== undefined; at = nextOurs(new JsonDocument(text, path), event, names)) {
      text = removeAt(text, at);
      removed = true;
    }
    const emptied = new JsonDocument(text, path).at(['hooks', event]);
    if (removed && emptied?.type === 'array' && (emptied.children ?? []).length === 0) text = removeAt(text, ['hooks', event]);
  }
  const hooks = new JsonDocument(text, path).at(['hooks']);
  if (text !== before && hooks?.type === 'object' && (hooks.children ?? []).length === 0) text = removeAt(text, ['hooks']);
  return text;
}

/** The two edits of an agent file that holds hooks and nothing else of ours: merge and its exact inverse (null: nothing would change). */
export interface HookFileEdits {
  merge(before: string | null, invocation: HookInvocation, path: string): string | null;
  unmerge(before: string, path: string): string | null;
}

export function hookFileEdits(specs: readonly HookSpec[], entry: HookEntry = claudeHookEntry): HookFileEdits {
  return {
    merge: (before, invocation, path) => {
      const doc = new JsonDocument(before ?? '', path);
      mergeHooks(doc, specs, invocation, entry, path);
      return doc.result();
    },
    unmerge: (before, path) => {
      const text = removeHooks(before, specs, path);
      return text === before ? null : text;
    },
  };
}
