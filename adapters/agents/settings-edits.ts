import type { HookInvocation } from './hook-commands.js';
import { claudeHookEntry, mergeHooks, removeHooks, type HookSpec } from './hook-groups.js';
import { JsonDocument } from './json-document.js';
import { mergeStatusLine, restoreStatusLine, type StatusLineSpec } from './status-line-setting.js';

export interface SettingsMerge {
  /** null when nothing would change. */
  readonly text: string | null;
  readonly notes: string[];
}

/** The two edits of an agent's settings file that gets our status line (and our hooks, if any): merge and its exact inverse. */
export interface SettingsEdits {
  merge(before: string | null, invocation: HookInvocation, path: string): SettingsMerge;
  unmerge(before: string, path: string): SettingsMerge;
}

/**
 * A settings file (Claude Code's, Qwen Code's, Copilot CLI's) with our status line and hooks merged in,
 * as small edits: every other byte stays as it was, running it on its own output changes nothing, and
 * the inverse takes out exactly that (a status line command of the user's, chained, comes back).
 */
export function settingsEdits(statusLine: StatusLineSpec, hooks: readonly HookSpec[]): SettingsEdits {
  return {
    merge: (before, invocation, path) => {
      const doc = new JsonDocument(before ?? '', path);
      const notes: string[] = [];
      mergeStatusLine(doc, invocation, statusLine, path, notes);
      // No hooks of ours here (Copilot CLI's settings): no `hooks` key added either.
      if (hooks.length > 0) mergeHooks(doc, hooks, invocation, claudeHookEntry, path);
      return { text: doc.result(), notes };
    },
    unmerge: (before, path) => {
      const notes: string[] = [];
      const text = removeHooks(restoreStatusLine(before, path, statusLine, notes), hooks, path);
      return { text: text === before ? null : text, notes };
    },
  };
}
