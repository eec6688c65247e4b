import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { Argument, type Command } from 'commander';
import {
  AGENTS,
  applyInstall,
  companionTargets,
  defaultTarget,
  planUninstall,
  previewInstall,
  type Agent,
  type FileOutcome,
} from '../../../adapters/agents/index.js';
import { success } from '../../../protocol/index.js';
import { resolveRepoRoot } from '../../git/index.js';
import { action } from '../context.js';
import { removeEmptied } from '../install-dirs.js';
import { diskIo } from '../install-disk.js';
import { renderFileChanges } from './install.js';

interface UninstallReport {
  agent: Agent;
  dry_run: boolean;
  files: FileOutcome[];
  /** Directories install created that the uninstall left empty, removed (or, with --dry-run, would be). */
  dirs_removed: string[];
  notes: readonly string[];
}

const renderUninstall = (report: UninstallReport): string =>
  [
    renderFileChanges(report, 'nothing of ours in'),
    ...report.dirs_removed.map((dir) => `${report.dry_run ? 'would remove' : 'removed'} the empty directory ${dir} (handoff install created it)`),
  ].join('\n');

export function registerUninstall(program: Command): void {
  program
    .command('uninstall')
    .description(
      "take the session-handoff integration out of an agent's config: exactly what `handoff install` added (its hooks, its block, its slash command; the status line you had before is restored from the chain), every other byte kept, a backup of a changed file, all files or none",
    )
    .addArgument(new Argument('<agent>').choices(AGENTS))
    .option('--dry-run', 'print the change as a unified diff and write nothing')
    .option('--settings <file>', 'the file install merged into, when it was not the default (see `handoff install --help`)')
    .action(
      action(async (ctx, agent: Agent, options: { dryRun?: boolean; settings?: string }) => {
        const repoRoot = agent === 'cline' && options.settings === undefined ? await resolveRepoRoot(ctx.repo) : ctx.repo;
        const target = resolve(options.settings ?? defaultTarget(agent, process.env, homedir(), repoRoot));
        const plan = await planUninstall(agent, target, diskIo, companionTargets(agent, target, process.env, homedir()));
        const dryRun = options.dryRun === true;
        const stamp = new Date().toISOString().replace(/[-:.]/g, '');
        const files = dryRun ? previewInstall(plan) : await applyInstall(plan, diskIo, stamp);
        const removed = plan.changes.flatMap((change) => (change.remove === true ? [change.writePath] : []));
        const dirs = await removeEmptied(ctx.stateDir, removed, dryRun);
        return success('ok', { agent, dry_run: dryRun, files, dirs_removed: dirs, notes: plan.notes } satisfies UninstallReport);
      }, renderUninstall),
    );
}
