import { HandoffError } from '../../protocol/errors.js';
import { GUARDED_TOOLS_MATCHER } from './guarded-tools.js';
import { chainedCommand, chainedStatusline, hookCommand, isOurHook, type HookInvocation, type HookName } from './hook-commands.js';

type Json = Record<string, unknown>;

/** Seconds Claude Code waits for a hook; ours answer in well under one. */
const HOOK_TIMEOUT = 5;

interface HookSpec {
  readonly event: string;
  readonly name: HookName;
  readonly matcher: string | null;
}

const HOOKS: readonly HookSpec[] = [
  { event: 'PreToolUse', name: 'claude-guard', matcher: GUARDED_TOOLS_MATCHER },
  { event: 'SessionStart', name: 'claude-session-start', matcher: null },
  // A stop on a rate limit is a provider near-limit warning: the daemon evacuates on it.
  { event: 'StopFailure', name: 'claude-event', matcher: 'rate_limit' },
];

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function refuse(path: string, problem: string): HandoffError {
  return new HandoffError('invalid_config', `${path}: ${problem}`, 'fix the file by hand (Claude Code reads it as strict JSON), then install again; nothing was changed');
}

function parseSettings(text: string, path: string): Json {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw refuse(path, `not valid JSON (${(error as Error).message})`);
  }
  if (!isObject(value)) throw refuse(path, 'the settings must be one JSON object');
  return value;
}

/** Our status line, chaining whatever command the user had, and keeping its other keys (padding…). */
function statusLine(current: unknown, invocation: HookInvocation, notes: string[]): Json {
  if (!isObject(current) || typeof current['command'] !== 'string' || current['command'].trim() === '') {
    return { type: 'command', command: chainedStatusline(invocation, null), padding: 0 };
  }
  const command = current['command'];
  if (!isOurHook(command, 'claude-statusline')) {
    notes.push(`the existing status line command is kept and chained: ${command}`);
    return { ...current, type: 'command', command: chainedStatusline(invocation, command) };
  }
  const previous = chainedCommand(command);
  if (previous === undefined) {
    notes.push('the status line command was edited by hand after install; it is left as it is');
    return current;
  }
  return { ...current, command: chainedStatusline(invocation, previous) };
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

/** The indentation the user's file already uses, so a merge changes only what it must. */
function indentOf(text: string): string | number {
  return /\n([ \t]+)"/.exec(text)?.[1] ?? 2;
}

export interface SettingsMerge {
  /** null when nothing would change. */
  readonly text: string | null;
  readonly notes: string[];
}

/**
 * Claude Code settings.json with our status line and hooks merged in. Every other key, hook and
 * matcher of the user stays as it was; running it on its own output changes nothing.
 */
export function mergeClaudeSettings(before: string | null, invocation: HookInvocation, path: string): SettingsMerge {
  const settings = before === null || before.trim() === '' ? {} : parseSettings(before, path);
  const notes: string[] = [];
  const currentHooks = settings['hooks'];
  if (currentHooks !== undefined && !isObject(currentHooks)) throw refuse(path, 'hooks must be an object');
  const hooks: Json = { ...currentHooks };
  for (const spec of HOOKS) hooks[spec.event] = withHook(hooks[spec.event], spec, invocation, path);
  const next: Json = { ...settings, statusLine: statusLine(settings['statusLine'], invocation, notes), hooks };
  if (JSON.stringify(next) === JSON.stringify(settings)) return { text: null, notes };
  return { text: `${JSON.stringify(next, null, before === null ? 2 : indentOf(before))}\n`, notes };
}
