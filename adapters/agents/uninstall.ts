import { join } from 'node:path';
import { clinePluginState } from './cline-plugin.js';
import { unmergeCodexHooks } from './codex-hooks.js';
import { unmergeCopilotSettings } from './copilot-hooks.js';
import { CLINE_RULE_FILE, HOOK_FILES, SETTINGS_FILES, type FileChange, type InstallPlan } from './install.js';
import { removeMarkedBlock } from './marked-block.js';
import { safeTarget, type InstallIo } from './safe-target.js';
import { CAPSULE_COMMAND } from './slash-command.js';
import type { Agent, Companions } from './targets.js';

/** A JSON file left as `{}` held nothing but what install put there. */
const emptyObject = (text: string) => text.replace(/\s/g, '') === '{}';

/**
 * What `handoff uninstall AGENT` would change: the inverse of planInstall, file by file, with the
 * same edit modules (one per file format) and the same path checks. A file left with nothing but
 * what install wrote goes; every other file keeps every byte of the user's.
 */
export async function planUninstall(agent: Agent, target: string, io: InstallIo, companions: Companions): Promise<InstallPlan> {
  const changes: FileChange[] = [];
  const notes: string[] = [];
  const change = async (path: string, edit: (before: string) => string | null, empty: (after: string) => boolean): Promise<void> => {
    const writePath = await safeTarget(path, io, notes);
    const before = await io.read(writePath);
    const after = before === null ? null : edit(before);
    if (after === null || after === before) changes.push({ path, writePath, before, after: null });
    else changes.push({ path, writePath, before, after: empty(after) ? '' : after, ...(empty(after) && { remove: true as const }) });
  };
  const blank = (text: string) => text.trim() === '';
  const block = (path: string) => change(path, (before) => removeMarkedBlock(before, path), blank);
  const settings = SETTINGS_FILES[agent];
  if (settings !== undefined) {
    await change(
      target,
      (before) => {
        const unmerged = settings.unmerge(before, target);
        notes.push(...unmerged.notes);
        return unmerged.text;
      },
      emptyObject,
    );
  } else if (HOOK_FILES[agent] !== undefined) {
    const edits = HOOK_FILES[agent];
    await change(target, (before) => edits.unmerge(before, target), emptyObject);
  } else {
    await block(agent === 'cline' && (await io.inspect(target)).kind !== 'file' ? join(target, CLINE_RULE_FILE) : target);
  }
  if (companions.instructions !== null) await block(companions.instructions);
  if (companions.slashCommand !== null) {
    const path = companions.slashCommand;
    await change(
      path,
      (before) => {
        if (before === CAPSULE_COMMAND) return '';
        notes.push(`${path} was edited after install; it is left as it is (remove it by hand if you no longer want it)`);
        return null;
      },
      blank,
    );
  }
  if (companions.clinePlugin !== null) {
    const path = companions.clinePlugin;
    await change(
      path,
      (before) => {
        const state = clinePluginState(before);
        if (state === 'ours') return '';
        if (state === 'edited') notes.push(`${path} was edited after install; it is left as it is (remove it by hand if you no longer want it)`);
        return null;
      },
      blank,
    );
  }
  if (companions.copilotSettings !== null) {
    const path = companions.copilotSettings;
    await change(
      path,
      (before) => {
        const unmerged = unmergeCopilotSettings(before, path);
        notes.push(...unmerged.notes);
        return unmerged.text;
      },
      emptyObject,
    );
  }
  if (companions.codexHooks !== null) {
    const path = companions.codexHooks;
    await change(path, (before) => unmergeCodexHooks(before, path), emptyObject);
  }
  return { agent, changes, notes };
}
