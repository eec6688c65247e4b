import { HandoffError } from '../../protocol/errors.js';
import { hookCommand, isOurHook, type HookInvocation, type HookName } from './hook-commands.js';

export type Json = Record<string, unknown>;

/** Seconds the agent waits for a hook; ours answer in well under one. */
const HOOK_TIMEOUT = 5;

/** One of our hooks in an agent's `hooks` object (Claude Code settings.json, Codex hooks.json: one shape). */
export interface HookSpec {
  readonly event: string;
  readonly name: HookName;
  /** null: no matcher, so every tool / source matches. */
  readonly matcher: string | null;
}

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

export function refuse(path: string, problem: string): HandoffError {
  return new HandoffError('invalid_config', `${path}: ${problem}`, 'fix the file by hand (the agent reads it as strict JSON), then install again; nothing was changed');
}

export function parseJsonObject(text: string, path: string): Json {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw refuse(path, `not valid JSON (${(error as Error).message})`);
  }
  if (!isObject(value)) throw refuse(path, 'the settings must be one JSON object');
  return value;
}

/** Our command in the event's hook list: updated where it already is, else one group appended. */
function withHook(list: unknown, spec: HookSpec, invocation: HookInvocation, path: string): unknown[] {
  if (list !== undefined && !Array.isArray(list)) throw refuse(path, `hooks.${spec.event} must be an array`);
  const groups: unknown[] = list ?? [];
  const command = hookCommand(invocation, spec.name);
  let found = false;
  const next = groups.map((group) => {
    if (!isObject(group) || !Array.isArray(group['hooks'])) return group;
    const hooks = group['hooks'].map((hook: unknown) => {
      if (!isObject(hook) || typeof hook['command'] !== 'string' || !isOurHook(hook['command'], spec.name)) return hook;
      found = true;
      return { ...hook, command };
    });
    return { ...group, hooks };
  });
  if (found) return next;
  const hook = { type: 'command', command, timeout: HOOK_TIMEOUT };
  return [...next, spec.matcher === null ? { hooks: [hook] } : { matcher: spec.matcher, hooks: [hook] }];
}

/** The `hooks` object with ours merged in; every hook and matcher of the user stays as it was. */
export function mergeHooks(current: unknown, specs: readonly HookSpec[], invocation: HookInvocation, path: string): Json {
  if (current !== undefined && !isObject(current)) throw refuse(path, 'hooks must be an object');
  const hooks: Json = { ...current };
  for (const spec of specs) hooks[spec.event] = withHook(hooks[spec.event], spec, invocation, path);
  return hooks;
}

/** The indentation the user's file already uses, so a merge changes only what it must. */
export function indentOf(text: string): string | number {
  return /\n([ \t]+)"/.exec(text)?.[1] ?? 2;
}
