import type { Command } from 'commander';
import { join } from 'node:path';
import { HandoffError, success, type Envelope } from '../../../protocol/index.js';
import { action, type CommandContext } from '../context.js';

/** Offline: the daemon must be stopped, so the instance guard is taken for the repair's duration. */
async function repair(ctx: CommandContext): Promise<Envelope> {
  const { acquireInstanceGuard, readClientToken, repairJournal, JOURNAL_FILE } = await import('../../store/index.js');
  // The daemon's own checks on the state dir, before anything in it is touched; a repair creates nothing.
  if ((await readClientToken(ctx.stateDir, process.getuid?.() ?? 0)) === null) {
    throw new HandoffError('usage_error', `${ctx.stateDir} is not a daemon state dir: there is no journal to repair`, 'pass the --state-dir the daemon uses');
  }
  const guard = await acquireInstanceGuard(ctx.stateDir, process.pid);
  try {
    const path = join(ctx.stateDir, JOURNAL_FILE);
    const result = await repairJournal(path, new Date());
    return success('journal_repaired', { journal: path, ...result });
  } finally {
    await guard.release();
  }
}

const human = (data: {
  journal: string;
  kept: number;
  quarantine: string | null;
  quarantinedBytes: number;
  damage: { line: number; reason: string } | null;
}) =>
  data.damage === null
    ? `journal ${data.journal} is whole (${data.kept} records): nothing to repair`
    : `journal ${data.journal}: line ${data.damage.line} was damaged (${data.damage.reason}); kept the ${data.kept} records before it, ` +
      `moved ${data.quarantinedBytes} bytes from it on to ${data.quarantine} (nothing was deleted). Start the daemon again.`;

export function registerJournal(program: Command): void {
  program
    .command('journal')
    .description('the daemon journal, offline (the daemon must be stopped)')
    .command('repair')
    .description('keep the records before the first damaged line; move the rest to a file beside the journal')
    .action(action(repair, human));
}
