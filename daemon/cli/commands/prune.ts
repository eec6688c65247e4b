import type { Command } from 'commander';
import { action } from '../context.js';
import { RENDERERS } from '../render/index.js';

interface PruneOptions {
  remote?: string;
  dryRun?: boolean;
}

export function registerPrune(program: Command): void {
  program
    .command('prune')
    .description('remove the handoff branches and refs of finished cycles (the daemon decides which ended)')
    .option('--remote <name>', 'also delete them on this remote (one atomic push)')
    .option('--dry-run', 'list what would be removed and change nothing')
    .action(
      action(
        (ctx, options: PruneOptions) =>
          ctx.call({
            method: 'POST',
            path: '/v1/prune',
            body: { repo: ctx.repo, dry_run: options.dryRun === true, ...(options.remote !== undefined && { remote: options.remote }) },
          }),
        RENDERERS.prune,
      ),
    );
}
