import { createHash } from 'node:crypto';
import { isOurHook, type HookName } from './hook-commands.js';

/** Events whose matcher Codex drops before hashing (they match every prompt / stop). */
const MATCHERLESS: ReadonlySet<string> = new Set(['UserPromptSubmit', 'Stop']);
/** Codex's timeout when a hook names none (seconds). */
const DEFAULT_TIMEOUT_SECONDS = 600;

export type CodexTrust = 'trusted' | 'needs_review' | 'changed_since_review' | 'disabled';

export interface CodexHookTrust {
  /** `<hooks.json path>:<event>:<group>:<hook>`, the key Codex keeps the trust under in config.toml. */
  readonly key: string;
  readonly command: string;
  /** What Codex computes for the hook as it stands in hooks.json. */
  readonly current_hash: string;
  /** What config.toml records, or null. */
  readonly trusted_hash: string | null;
  readonly trust: CodexTrust;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `PostToolUse` → `post_tool_use`: Codex's label of an event in keys and hashes. */
const eventLabel = (event: string): string => event.replace(/(?<=[a-z0-9])([A-Z])/g, '_$1').toLowerCase();

/** JSON with every object's keys sorted, no whitespace: serde_json's compact form of a canonical value. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value))
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/**
 * The hash Codex (0.147 and later, codex-rs/hooks discovery `command_hook_hash` → config
 * `version_for_toml`) records as `trusted_hash` once a person trusts a command hook: sha256 of the
 * canonical JSON of the event label, the matcher (absent when none or when the event takes none) and
 * the one normalised handler — its command, timeout (600 s when unset, at least 1), async flag and
 * status message; absent fields are left out, as TOML leaves out what it cannot hold.
 */
export function codexHookHash(event: string, matcher: string | null, hook: Json): string {
  const timeout = typeof hook['timeout'] === 'number' ? Math.max(1, Math.trunc(hook['timeout'])) : DEFAULT_TIMEOUT_SECONDS;
  const handler: Json = { type: 'command', command: hook['command'], timeout, async: hook['async'] === true };
  if (typeof hook['statusMessage'] === 'string') handler['statusMessage'] = hook['statusMessage'];
  const identity: Json = { event_name: eventLabel(event), hooks: [handler] };
  if (matcher !== null && !MATCHERLESS.has(event)) identity['matcher'] = matcher;
  return `sha256:${createHash('sha256').update(canonical(identity)).digest('hex')}`;
}

interface HookState {
  readonly trusted_hash: string | null;
  readonly enabled: boolean;
}

/**
 * The `[hooks.state."KEY"]` tables of a config.toml, as Codex writes them (a quoted key, then
 * `trusted_hash = "…"` and `enabled = …` lines). Another layout is not followed: its hooks read as
 * needing review, which is the safe thing to tell a person.
 */
export function codexHookStates(configToml: string): Map<string, HookState> {
  const states = new Map<string, HookState>();
  let key: string | null = null;
  let state: { trusted_hash: string | null; enabled: boolean } = { trusted_hash: null, enabled: true };
  const close = () => {
    if (key !== null) states.set(key, state);
  };
  for (const line of configToml.split(/\r?\n/)) {
    if (/^\s*\[/.test(line)) {
      close();
      key = tableKey(line);
      if (key !== null) state = { trusted_hash: null, enabled: true };
      continue;
    }
    if (key === null) continue;
    const hash = /^\s*trusted_hash\s*=\s*"(sha256:[0-9a-f]{64})"\s*(?:#.*)?$/.exec(line);
    if (hash?.[1] !== undefined) state.trusted_hash = hash[1];
    if (/^\s*enabled\s*=\s*false\s*(?:#.*)?$/.test(line)) state.enabled = false;
  }
  close();
  return states;
}

/** A TOML basic string; its escapes are JSON's for everything a path holds. Null when it is not one. */
function readBasicString(quoted: string): string | null {
  try {
    const value: unknown = JSON.parse(quoted);
    return typeof value === 'string' ? value : null;
  } catch (error) {
    if (error instanceof SyntaxError) return null;
    throw error;
  }
}

/** Our hooks in a Codex hooks.json, each with what Codex would say of its trust. */
export function codexHookTrust(hooksJson: unknown, hooksPath: string, states: ReadonlyMap<string, HookState>, names: readonly HookName[]): CodexHookTrust[] {
  const found: CodexHookTrust[] = [];
  const events = isObject(hooksJson) && isObject(hooksJson['hooks']) ? hooksJson['hooks'] : {};
  for (const [event, groups] of Object.entries(events)) {
    if (!Array.isArray(groups)) continue;
    groups.forEach((group: unknown, groupIndex) => {
      if (!isObject(group) || !Array.isArray(group['hooks'])) return;
      const matcher = typeof group['matcher'] === 'string' ? group['matcher'] : null;
      group['hooks'].forEach((hook: unknown, hookIndex) => {
        if (!isObject(hook) || typeof hook['command'] !== 'string') return;
        const command = hook['command'];
        if (!names.some((name) => isOurHook(command, name))) return;
        const key = `${hooksPath}:${eventLabel(event)}:${groupIndex}:${hookIndex}`;
        const current = codexHookHash(event, matcher, hook);
        const state = states.get(key);
        const trusted = state?.trusted_hash ?? null;
        const trust: CodexTrust =
          state?.enabled === false ? 'disabled' : trusted === null ? 'needs_review' : trusted === current ? 'trusted' : 'changed_since_review';
        found.push({ key, command, current_hash: current, trusted_hash: trusted, trust });
      });
    });
  }
  return found;
}

/**
 * config.toml with Codex's trust recorded for exactly these hooks, as Codex's `/hooks` review writes it
 * (`[hooks.state."KEY"]` + `trusted_hash = "…"`): a table appended for a hook never reviewed, the hash
 * line replaced in the table of one changed since. A hook the person disabled stays disabled, and one
 * already trusted is left alone. Null: nothing would change.
 */
export function withCodexTrust(configToml: string, hooks: readonly CodexHookTrust[]): string | null {
  const lines = configToml === '' ? [] : configToml.replace(/\n$/, '').split('\n');
  let changed = false;
  for (const hook of hooks) {
    if (hook.trust === 'trusted' || hook.trust === 'disabled') continue;
    const line = `trusted_hash = "${hook.current_hash}"`;
    const at = lines.findIndex((text) => tableKey(text) === hook.key);
    const end = at < 0 ? -1 : lines.findIndex((text, i) => i > at && /^\s*\[/.test(text));
    const hashAt = at < 0 ? -1 : lines.findIndex((text, i) => i > at && (end < 0 || i < end) && /^\s*trusted_hash\s*=/.test(text));
    if (hashAt >= 0) lines[hashAt] = line;
    else if (at >= 0) lines.splice(at + 1, 0, line);
    else lines.push(`[hooks.state.${JSON.stringify(hook.key)}]`, line);
    changed = true;
  }
  return changed ? `${lines.join('\n')}\n` : null;
}

/** The key of a `[hooks.state."KEY"]` header line, else null. */
function tableKey(line: string): string | null {
  const header = /^\s*\[\s*hooks\s*\.\s*state\s*\.\s*("(?:[^"\\]|\\.)*")\s*\]\s*(?:#.*)?$/.exec(line);
  return header?.[1] === undefined ? null : readBasicString(header[1]);
}
