import { Command } from 'commander';

type Register = (program: Command) => void;

/**
 * Every top-level command, in the order `--help` lists them, with the module that registers it. Only
 * the module of the command on the command line is imported: `handoff status` does not load the
 * installers, the journal repair or the daemon. Help, `--version`, no command or an unknown one load
 * them all, so help and commander's suggestions stay complete (test/unit/cli/lazy-program.test.ts
 * checks this table against what the modules register).
 */
export const COMMAND_MODULES: readonly { readonly names: readonly string[]; readonly load: () => Promise<Register> }[] = [
  { names: ['daemon'], load: async () => (await import('./commands/daemon.js')).registerDaemon },
  { names: ['status', 'signal'], load: async () => (await import('./commands/observe.js')).registerObserve },
  { names: ['prepare', 'now', 'drained', 'cancel', 'check', 'resume'], load: async () => (await import('./commands/stages.js')).registerStages },
  { names: ['capsule'], load: async () => (await import('./commands/capsule.js')).registerCapsule },
  { names: ['verify', 'accept', 'return', 'close', 'list', 'show'], load: async () => (await import('./commands/takeover.js')).registerTakeover },
  { names: ['lease'], load: async () => (await import('./commands/lease.js')).registerLease },
  { names: ['pause', 'unpause'], load: async () => (await import('./commands/pause.js')).registerPause },
  { names: ['ingest'], load: async () => (await import('./commands/ingest.js')).registerIngest },
  { names: ['hook'], load: async () => (await import('./commands/hook.js')).registerHook },
  { names: ['install'], load: async () => (await import('./commands/install.js')).registerInstall },
  { names: ['doctor'], load: async () => (await import('./commands/doctor.js')).registerDoctor },
  { names: ['uninstall'], load: async () => (await import('./commands/uninstall.js')).registerUninstall },
  { names: ['service'], load: async () => (await import('./commands/service.js')).registerService },
  { names: ['config'], load: async () => (await import('./commands/config.js')).registerConfig },
  { names: ['journal'], load: async () => (await import('./commands/journal.js')).registerJournal },
  { names: ['open'], load: async () => (await import('./commands/open.js')).registerOpen },
  { names: ['completion'], load: async () => (await import('./commands/completion.js')).registerCompletion },
];

/** The first operand of `args` (argv without node and the script): the command, past global options. */
function commandName(program: Command, args: readonly string[]): string | undefined {
  const takesValue = new Set(
    program.options.filter((o) => o.required || o.optional).flatMap((o) => [o.long, o.short].filter((f): f is string => f !== undefined)),
  );
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (arg === '--') return args[i + 1];
    if (!arg.startsWith('-')) return arg;
    if (takesValue.has(arg)) i += 1;
  }
  return undefined;
}

/** `argv` as process.argv; without it every command is registered (help, tests). */
export async function buildProgram(version: string, argv?: readonly string[]): Promise<Command> {
  const program = new Command('handoff')
    .description('session-handoff: hand a dying coding-agent session over with a verified checkpoint and one lease')
    .version(version)
    .option('--json', 'print exactly one JSON object (the Envelope) on stdout')
    .option('--repo <dir>', 'the repository (default: the git root of the current directory)')
    .option('--state-dir <dir>', 'the daemon state dir (default: $HANDOFF_STATE_DIR, $XDG_STATE_HOME/session-handoff, ~/.local/state/session-handoff)')
    .showHelpAfterError()
    .exitOverride();
  const name = argv === undefined ? undefined : commandName(program, argv.slice(2));
  const named = COMMAND_MODULES.find((module) => name !== undefined && module.names.includes(name));
  for (const register of await Promise.all((named === undefined ? COMMAND_MODULES : [named]).map((module) => module.load()))) register(program);
  for (const command of program.commands) inheritExit(command);
  return program;
}

function inheritExit(command: Command): void {
  command.exitOverride();
  for (const child of command.commands) inheritExit(child);
}
