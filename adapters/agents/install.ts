import { join } from 'node:path';
import { mergeClaudeSettings } from './claude-settings.js';
import { mergeCodexHooks } from './codex-hooks.js';
import type { HookInvocation } from './hook-commands.js';
import { AGENT_INSTRUCTIONS } from './instructions.js';
import { unifiedDiff } from './line-diff.js';
import { upsertMarkedBlock } from './marked-block.js';
import { CAPSULE_COMMAND } from './slash-command.js';
import type { Agent, Companions } from './targets.js';

/** The file system as the installer sees it; the CLI supplies atomic writes. */
export interface InstallIo {
  read(path: string): Promise<string | null>;
  isFile(path: string): Promise<boolean>;
  /** Replaces the file atomically, creating its directory when missing. */
  write(path: string, text: string): Promise<void>;
  /** Writes a file that must not exist yet. */
  writeNew(path: string, text: string): Promise<void>;
}

export interface FileChange {
  readonly path: string;
  readonly before: string | null;
  /** null: the file already says what the install would write. */
  readonly after: string | null;
}

export interface InstallPlan {
  readonly agent: Agent;
  readonly changes: readonly FileChange[];
  readonly notes: readonly string[];
}

export interface FileOutcome {
  readonly path: string;
  readonly action: 'created' | 'updated' | 'unchanged';
  readonly backup: string | null;
  readonly diff: string;
}

const CLINE_RULE_FILE = 'session-handoff.md';

/**
 * What `handoff install AGENT` would change in `target` and its companions. Claude Code gets its
 * settings merged and the `/handoff-capsule` command; the others get our instructions as a marked
 * block, which leaves the user's own text alone, and Codex its hooks.json merged. For Cline a
 * `.clinerules` directory (or none yet) gets a file of ours, a single `.clinerules` file the block.
 */
export async function planInstall(agent: Agent, target: string, invocation: HookInvocation, io: InstallIo, companions: Companions): Promise<InstallPlan> {
  const changes: FileChange[] = [];
  let notes: readonly string[] = [];
  if (agent === 'claude') {
    const before = await io.read(target);
    const merged = mergeClaudeSettings(before, invocation, target);
    changes.push({ path: target, before, after: merged.text });
    notes = merged.notes;
  } else {
    const path = agent === 'cline' && !(await io.isFile(target)) ? join(target, CLINE_RULE_FILE) : target;
    const before = await io.read(path);
    const after = upsertMarkedBlock(before, AGENT_INSTRUCTIONS, path);
    changes.push({ path, before, after: after === before ? null : after });
  }
  if (companions.slashCommand !== null) {
    // The whole file is ours: rewritten when it differs (the previous version is kept as a backup).
    const before = await io.read(companions.slashCommand);
    changes.push({ path: companions.slashCommand, before, after: before === CAPSULE_COMMAND ? null : CAPSULE_COMMAND });
  }
  if (companions.codexHooks !== null) {
    const before = await io.read(companions.codexHooks);
    changes.push({ path: companions.codexHooks, before, after: mergeCodexHooks(before, invocation, companions.codexHooks) });
  }
  return { agent, changes, notes };
}

export function previewInstall(plan: InstallPlan): FileOutcome[] {
  return plan.changes.map((change) => outcome(change, null));
}

/** Writes the plan: the previous version of a changed file is kept next to it first. */
export async function applyInstall(plan: InstallPlan, io: InstallIo, stamp: string): Promise<FileOutcome[]> {
  const outcomes: FileOutcome[] = [];
  for (const change of plan.changes) {
    let backup: string | null = null;
    if (change.after !== null) {
      if (change.before !== null) {
        backup = `${change.path}.handoff-backup-${stamp}`;
        await io.writeNew(backup, change.before);
      }
      await io.write(change.path, change.after);
    }
    outcomes.push(outcome(change, backup));
  }
  return outcomes;
}

function outcome(change: FileChange, backup: string | null): FileOutcome {
  if (change.after === null) return { path: change.path, action: 'unchanged', backup: null, diff: '' };
  return {
    path: change.path,
    action: change.before === null ? 'created' : 'updated',
    backup,
    diff: unifiedDiff(change.path, change.before, change.after),
  };
}
