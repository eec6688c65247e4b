import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import {
  AGENTS,
  applyInstall,
  companionTargets,
  defaultTarget,
  planInstall,
  previewInstall,
  type Agent,
  type FileOutcome,
} from '../../../adapters/agents/index.js';
import { success } from '../../../protocol/index.js';
import { resolveRepoRoot } from '../../git/index.js';
import { SPOOL_DIR } from '../../../protocol/event-spool.js';
import { resolveStateDir } from '../../store/index.js';
import { action, usage } from '../context.js';
import { hookLauncher } from '../hook-launcher.js';
import { missingDirs, recordCreated } from '../install-dirs.js';
import { diskIo } from '../install-disk.js';

/** The agents whose config gets hook commands (the others get instructions only). */
const RUNS_HOOKS: ReadonlySet<Agent> = new Set(['claude', 'codex', 'gemini', 'copilot', 'qwen', 'cline']);

interface InstallOptions {
  dryRun?: boolean;
  trust?: boolean;
  settings?: string;
  command?: string;
}

interface InstallReport {
  agent: Agent;
  dry_run: boolean;
  files: FileOutcome[];
  notes: readonly string[];
}

/**
 * What a person does once after the files are written. Codex runs a hook only after a person reviewed
 * and trusted it (its trusted_hash in config.toml); the installer never writes that trust itself:
 * trusting code to run in every session is the person's decision, and a tool that grants it to
 * itself makes the review meaningless.
 */
export const CODEX_TRUST_STEP =
  'Codex runs these hooks only once you have trusted them: start `codex` in a terminal, type `/hooks`, review the session-handoff hooks and trust them (until then every session, `codex exec` included, skips them without a word); `handoff doctor` tells when they are live';

const setupSteps = (agent: Agent, trusted: boolean): string[] => (agent === 'codex' && !trusted ? [CODEX_TRUST_STEP] : []);

/** The state dir goes into the hook commands unless the hooks would find it by themselves from $HOME. */
function stateDirToBake(stateDir: string): string | null {
  return stateDir === resolve(resolveStateDir({}, homedir())) ? null : stateDir;
}

/**
 * The files an install or uninstall changed (or would, with --dry-run: each diff), then its notes.
 * `unchanged` is what a file it left alone is called.
 */
export function renderFileChanges(
  report: { readonly dry_run: boolean; readonly files: readonly FileOutcome[]; readonly notes: readonly string[] },
  unchanged: string,
): string {
  const verb = (outcome: FileOutcome['action']) =>
    outcome === 'unchanged' ? unchanged : report.dry_run ? { created: 'would create', updated: 'would update', removed: 'would remove' }[outcome] : outcome;
  const lines: string[] = [];
  for (const file of report.files) {
    lines.push(`${verb(file.action)} ${file.path}${file.backup === null ? '' : ` (previous version kept in ${file.backup})`}`);
    if (report.dry_run && file.diff !== '') lines.push(file.diff.trimEnd());
  }
  for (const note of report.notes) lines.push(`note: ${note}`);
  return lines.join('\n');
}

const renderInstall = (report: InstallReport): string => renderFileChanges(report, 'unchanged');

export function registerInstall(program: Command): void {
  program
    .command('install')
    .description(
      "merge the session-handoff integration into an agent's own config (idempotent; keeps a backup of a changed file; edits only its own hooks and block, every other byte kept; all files or none): claude settings.json + the /handoff-capsule command; codex AGENTS.md + hooks.json; opencode AGENTS.md; cline .clinerules + the plugin $CLINE_DIR/plugins/session-handoff.js; gemini settings.json hooks + GEMINI.md; copilot ~/.copilot/hooks/session-handoff.json; qwen ~/.qwen/settings.json hooks. Inside a repository a symbolic link is refused; a user config that is a link is edited at its target; a read-only file is refused",
    )
    .argument('<agent>', AGENTS.join(' | '))
    .option('--dry-run', 'print the change as a unified diff and write nothing')
    .option(
      '--trust',
      "codex: also record Codex's trust (config.toml `trusted_hash`) for exactly the hooks this install writes, naming each; you are the one trusting them",
    )
    .option(
      '--settings <file>',
      'the file to merge into (default: claude ~/.claude/settings.json, codex $CODEX_HOME/AGENTS.md, opencode ~/.config/opencode/AGENTS.md, cline <repo>/.clinerules, gemini ~/.gemini/settings.json, copilot $COPILOT_HOME/hooks/session-handoff.json, qwen $QWEN_HOME/settings.json; a project: <repo>/.claude/settings.json, <repo>/.gemini/settings.json)',
    )
    .option(
      '--command <cmd>',
      'how the installed hooks start handoff (default: `handoff` when it is on PATH and leads to this install, else this node and this install by absolute path)',
    )
    .action(
      action(async (ctx, agent: string, options: InstallOptions) => {
        if (!(AGENTS as readonly string[]).includes(agent)) usage(`unknown agent '${agent}'`, `choose one of ${AGENTS.join(', ')}`);
        const known = agent as Agent;
        if (options.trust === true && known !== 'codex') usage('--trust is for codex only', `run \`handoff install ${known}\` without it`);
        const repoRoot = known === 'cline' && options.settings === undefined ? await resolveRepoRoot(ctx.repo) : ctx.repo;
        const target = resolve(options.settings ?? defaultTarget(known, process.env, homedir(), repoRoot));
        const companions = companionTargets(known, target, process.env, homedir());
        const launcher = hookLauncher(options.command, process.env);
        const invocation = { handoff: launcher.command, stateDir: stateDirToBake(ctx.stateDir), spoolDir: join(ctx.stateDir, SPOOL_DIR) };
        const trust = options.trust === true;
        const plan = await planInstall(known, target, invocation, diskIo, companions, { trustCodex: trust });
        const notes = [...(launcher.note === null || !RUNS_HOOKS.has(known) ? [] : [launcher.note]), ...plan.notes, ...setupSteps(known, trust)];
        const dryRun = options.dryRun === true;
        const stamp = new Date().toISOString().replace(/[-:.]/g, '');
        if (dryRun) return success('ok', { agent: known, dry_run: dryRun, files: previewInstall(plan), notes } satisfies InstallReport);
        // Remembered so that `handoff uninstall` takes back an emptied directory of ours, never one of the user's.
        const missing = await missingDirs(plan.changes.flatMap((change) => (change.after === null ? [] : [change.writePath])));
        const files = await applyInstall(plan, diskIo, stamp);
        await recordCreated(ctx.stateDir, missing);
        return success('ok', { agent: known, dry_run: dryRun, files, notes } satisfies InstallReport);
      }, renderInstall),
    );
}
