import { dirname, join } from 'node:path';
import { parse } from 'jsonc-parser';
import { mergeClaudeSettings, unmergeClaudeSettings } from './claude-settings.js';
import { clinePlugin } from './cline-plugin.js';
import { CODEX_HOOKS, mergeCodexHooks } from './codex-hooks.js';
import { codexHookStates, codexHookTrust, withCodexTrust } from './codex-trust.js';
import { COPILOT_HOOK_EDITS, mergeCopilotSettings } from './copilot-hooks.js';
import { GEMINI_HOOK_EDITS } from './gemini-settings.js';
import type { HookFileEdits } from './hook-groups.js';
import type { HookInvocation } from './hook-commands.js';
import { AGENT_INSTRUCTIONS } from './instructions.js';
import { unifiedDiff } from './line-diff.js';
import { upsertMarkedBlock } from './marked-block.js';
import { mergeQwenSettings, unmergeQwenSettings } from './qwen-settings.js';
import { safeTarget, type InstallIo } from './safe-target.js';
import type { SettingsEdits } from './settings-edits.js';
import { CAPSULE_COMMAND } from './slash-command.js';
import type { Agent, Companions } from './targets.js';

export interface FileChange {
  /** The path the agent reads, as named to the user. */
  readonly path: string;
  /** Where the bytes go: `path`, or the target of a user config that is a symbolic link. */
  readonly writePath: string;
  readonly before: string | null;
  /** null: the file already says what the install would write. */
  readonly after: string | null;
  /** The whole file is ours and goes (an uninstall of a file the install created). */
  readonly remove?: true;
}

export interface InstallPlan {
  readonly agent: Agent;
  readonly changes: readonly FileChange[];
  readonly notes: readonly string[];
}

export interface FileOutcome {
  readonly path: string;
  readonly action: 'created' | 'updated' | 'unchanged' | 'removed';
  readonly backup: string | null;
  readonly diff: string;
}

export const CLINE_RULE_FILE = 'session-handoff.md';

/** The agents whose target is a JSON file where our part is hooks alone. */
export const HOOK_FILES: Partial<Record<Agent, HookFileEdits>> = { gemini: GEMINI_HOOK_EDITS, copilot: COPILOT_HOOK_EDITS };

/** The agents whose target is a settings file with our status line and hooks: edits that can leave a note. */
export const SETTINGS_FILES: Partial<Record<Agent, SettingsEdits>> = {
  claude: { merge: mergeClaudeSettings, unmerge: unmergeClaudeSettings },
  qwen: { merge: mergeQwenSettings, unmerge: unmergeQwenSettings },
};

/**
 * What `handoff install AGENT` would change in `target` and its companions. Claude Code gets its
 * settings merged and the `/handoff-capsule` command; Gemini CLI its settings.json hooks and a
 * GEMINI.md block; Copilot CLI a hooks file of ours and its settings.json our status line; Qwen Code its settings.json hooks and status line; the others get our instructions as a marked block, which leaves the user's own
 * text alone, and Codex its hooks.json merged. For Cline a `.clinerules` directory (or none yet)
 * gets a file of ours, a single `.clinerules` file the block, and its plugins directory our plugin. Every path is checked before it is
 * read (safe-target.ts): a link inside a repository is refused, a read-only file too.
 */
export async function planInstall(
  agent: Agent,
  target: string,
  invocation: HookInvocation,
  io: InstallIo,
  companions: Companions,
  options: { readonly trustCodex?: boolean } = {},
): Promise<InstallPlan> {
  const changes: FileChange[] = [];
  const notes: string[] = [];
  const change = async (path: string, edit: (before: string | null, writePath: string) => string | null): Promise<void> => {
    const writePath = await safeTarget(path, io, notes);
    const before = await io.read(writePath);
    const after = edit(before, writePath);
    changes.push({ path, writePath, before, after: after === before ? null : after });
  };
  const settings = SETTINGS_FILES[agent];
  if (settings !== undefined) {
    await change(target, (before) => {
      const merged = settings.merge(before, invocation, target);
      notes.push(...merged.notes);
      return merged.text;
    });
  } else if (HOOK_FILES[agent] !== undefined) {
    const edits = HOOK_FILES[agent];
    await change(target, (before) => edits.merge(before, invocation, target));
  } else {
    // lstat, not stat: a .clinerules link is refused by safeTarget whatever it points at.
    const path = agent === 'cline' && (await io.inspect(target)).kind !== 'file' ? join(target, CLINE_RULE_FILE) : target;
    await change(path, (before) => upsertMarkedBlock(before, AGENT_INSTRUCTIONS, path));
  }
  if (companions.instructions !== null) {
    const path = companions.instructions;
    await change(path, (before) => upsertMarkedBlock(before, AGENT_INSTRUCTIONS, path));
  }
  if (companions.slashCommand !== null) {
    // The whole file is ours: rewritten when it differs (the previous version is kept as a backup).
    await change(companions.slashCommand, (before) => (before === CAPSULE_COMMAND ? null : CAPSULE_COMMAND));
  }
  if (companions.clinePlugin !== null) {
    // The whole file is ours, like the slash command: rewritten when it differs (a backup kept, under a name Cline does not load).
    const text = clinePlugin(invocation);
    await change(companions.clinePlugin, (before) => (before === text ? null : text));
  }
  if (companions.copilotSettings !== null) {
    const path = companions.copilotSettings;
    await change(path, (before) => {
      const merged = mergeCopilotSettings(before, invocation, path);
      notes.push(...merged.notes);
      return merged.text;
    });
  }
  if (companions.codexHooks !== null) {
    const path = companions.codexHooks;
    await change(path, (before) => mergeCodexHooks(before, invocation, path));
    const hooks = changes.at(-1);
    if (options.trustCodex === true && hooks !== undefined) await trustCodex(hooks, change, notes);
  }
  return { agent, changes, notes };
}

/**
 * `install codex --trust`: Codex's trust for exactly the hooks this install wrote, in the config.toml
 * beside hooks.json (where `handoff doctor` reads it), each named in a note: the person running the
 * command is the one trusting them.
 */
async function trustCodex(
  hooks: FileChange,
  change: (path: string, edit: (before: string | null) => string | null) => Promise<void>,
  notes: string[],
): Promise<void> {
  const text = hooks.after ?? hooks.before ?? '{}';
  const config = join(dirname(hooks.path), 'config.toml');
  await change(config, (before) => {
    const toml = before ?? '';
    const ours = codexHookTrust(parse(text) as unknown, hooks.path, codexHookStates(toml), [...new Set(CODEX_HOOKS.map((spec) => spec.name))]);
    for (const hook of ours)
      if (hook.trust !== 'trusted' && hook.trust !== 'disabled') notes.push(`trusted for Codex (--trust): ${hook.key} runs \`${hook.command}\``);
    for (const hook of ours) if (hook.trust === 'disabled') notes.push(`left disabled, as you set it in Codex: ${hook.key}`);
    return withCodexTrust(toml, ours) ?? before;
  });
}

export function previewInstall(plan: InstallPlan): FileOutcome[] {
  return plan.changes.map((change) => outcome(change, null));
}

/**
 * Writes the plan, all or nothing: every changed file and the backup of its previous version are
 * staged first, then put in place together; a failure on any of them leaves every file as it was.
 */
export async function applyInstall(plan: InstallPlan, io: InstallIo, stamp: string): Promise<FileOutcome[]> {
  // The backup sits beside the path the agent reads (for a dotfiles link: beside the link).
  const backupPath = (path: string) => `${path}.handoff-backup-${stamp}`;
  // A removed file held only our bytes: there is nothing of the user's to keep a backup of.
  const kept = (change: FileChange) => change.after !== null && change.before !== null && change.remove !== true;
  const writes = plan.changes.flatMap((change) => {
    if (change.after === null) return [];
    const { path, writePath, before } = change;
    const text = change.remove === true ? null : change.after;
    return [{ path: writePath, text, before, backup: kept(change) && before !== null ? { path: backupPath(path), text: before } : null }];
  });
  if (writes.length > 0) await io.commit(writes);
  return plan.changes.map((change) => outcome(change, kept(change) ? backupPath(change.path) : null));
}

function outcome(change: FileChange, backup: string | null): FileOutcome {
  if (change.after === null) return { path: change.path, action: 'unchanged', backup: null, diff: '' };
  return {
    path: change.path,
    action: change.remove === true ? 'removed' : change.before === null ? 'created' : 'updated',
    backup,
    diff: unifiedDiff(change.path, change.before, change.after),
  };
}
