import { Command } from 'commander';
import { registerCapsule } from './commands/capsule.js';
import { registerDaemon } from './commands/daemon.js';
import { registerHook } from './commands/hook.js';
import { registerIngest } from './commands/ingest.js';
import { registerInstall } from './commands/install.js';
import { registerJournal } from './commands/journal.js';
import { registerLease } from './commands/lease.js';
import { registerObserve } from './commands/observe.js';
import { registerOpen } from './commands/open.js';
import { registerPause } from './commands/pause.js';
import { registerStages } from './commands/stages.js';
import { registerTakeover } from './commands/takeover.js';

export function buildProgram(version: string): Command {
  const program = new Command('handoff')
    .description('session-handoff: hand a dying coding-agent session over with a verified checkpoint and one lease')
    .version(version)
    .option('--json', 'print exactly one JSON object (the Envelope) on stdout')
    .option('--repo <dir>', 'the repository (default: the git root of the current directory)')
    .option('--state-dir <dir>', 'the daemon state dir (default: $HANDOFF_STATE_DIR, $XDG_STATE_HOME/session-handoff, ~/.local/state/session-handoff)')
    .showHelpAfterError()
    .exitOverride();
  registerDaemon(program);
  registerObserve(program);
  registerStages(program);
  registerCapsule(program);
  registerTakeover(program);
  registerLease(program);
  registerPause(program);
  registerIngest(program);
  registerHook(program);
  registerInstall(program);
  registerJournal(program);
  registerOpen(program);
  for (const command of program.commands) inheritExit(command);
  return program;
}

function inheritExit(command: Command): void {
  command.exitOverride();
  for (const child of command.commands) inheritExit(child);
}
