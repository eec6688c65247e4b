import { Command, Help, type Option } from 'commander';

type Register = (program: Command) => void;

/** The headings of `handoff --help`, in order, like gh's: what a person runs first, then the rest. */
export const GROUPS = ['Core commands', 'Lease and kill switch', 'Setup', 'Agent plumbing', 'Maintenance', 'Other commands'] as const;
export type Group = (typeof GROUPS)[number];

interface CommandModule {
  readonly names: readonly string[];
  readonly load: () => Promise<Register>;
  /** The help heading of the module's commands; `groupOf` moves single ones elsewhere. */
  readonly group?: Group;
  readonly groupOf?: Readonly<Record<string, Group>>;
}

/**
 * Every top-level command, in the order `--help` lists them, with the module that registers it. Only
 * the module of the command on the command line is imported: `handoff status` does not load the
 * installers, the journal repair or the daemon. Help, `--version`, no command or an unknown one load
 * them all, so help and commander's suggestions stay complete (test/unit/cli/lazy-program.test.ts
 * checks this table against what the modules register).
 */
export const COMMAND_MODULES: readonly CommandModule[] = [
  { names: ['daemon'], group: 'Setup', load: async () => (await import('./commands/daemon.js')).registerDaemon },
  {
    names: ['status', 'signal'],
    group: 'Core commands',
    groupOf: { signal: 'Agent plumbing' },
    load: async () => (await import('./commands/observe.js')).registerObserve,
  },
  {
    names: ['prepare', 'now', 'drained', 'cancel', 'check', 'resume'],
    group: 'Core commands',
    groupOf: { drained: 'Agent plumbing', check: 'Agent plumbing' },
    load: async () => (await import('./commands/stages.js')).registerStages,
  },
  { names: ['capsule'], group: 'Agent plumbing', load: async () => (await import('./commands/capsule.js')).registerCapsule },
  {
    names: ['verify', 'accept', 'return', 'close', 'list', 'show'],
    group: 'Core commands',
    load: async () => (await import('./commands/takeover.js')).registerTakeover,
  },
  { names: ['lease'], group: 'Lease and kill switch', load: async () => (await import('./commands/lease.js')).registerLease },
  { names: ['pause', 'unpause'], group: 'Lease and kill switch', load: async () => (await import('./commands/pause.js')).registerPause },
  { names: ['ingest'], group: 'Agent plumbing', load: async () => (await import('./commands/ingest.js')).registerIngest },
  { names: ['hook'], group: 'Agent plumbing', load: async () => (await import('./commands/hook.js')).registerHook },
  { names: ['install'], group: 'Setup', load: async () => (await import('./commands/install.js')).registerInstall },
  { names: ['doctor'], group: 'Setup', load: async () => (await import('./commands/doctor.js')).registerDoctor },
  { names: ['uninstall'], group: 'Setup', load: async () => (await import('./commands/uninstall.js')).registerUninstall },
  { names: ['service'], group: 'Setup', load: async () => (await import('./commands/service.js')).registerService },
  { names: ['config'], group: 'Setup', load: async () => (await import('./commands/config.js')).registerConfig },
  { names: ['prune'], group: 'Maintenance', load: async () => (await import('./commands/prune.js')).registerPrune },
  { names: ['journal'], group: 'Maintenance', load: async () => (await import('./commands/journal.js')).registerJournal },
  { names: ['open'], group: 'Setup', load: async () => (await import('./commands/open.js')).registerOpen },
  { names: ['completion'], group: 'Maintenance', load: async () => (await import('./commands/completion.js')).registerCompletion },
];

/** What `handoff --help` ends with: the few command lines a new user needs, in the order they need them. */
const EXAMPLES = `
Examples:
  $ handoff install claude                    connect Claude Code (its status line feeds real numbers)
  $ handoff status                            where this repository stands, and the one next thing to do
  $ handoff now --reason "switching machines" checkpoint, push and offer the lease now
  $ handoff accept --latest --as laptop       in the other checkout: verify it and take the lease
  $ handoff return                            the lease holder hands the work back

Run \`handoff <command> --help\` for one command. Exit codes and every error: docs/codes.md.`;

/** `handoff <command> --help` ends with these: the common ways to run the commands a person runs most. */
const COMMAND_EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  status: [
    'handoff status                      this repository',
    'handoff status --repo ~/src/app     another one',
    'handoff status --json               the Envelope, for scripts',
  ],
  now: ['handoff now --reason "switching machines"', "handoff now --no-wait               do not wait for the agent's `handoff drained`"],
  accept: [
    'handoff accept 20261129T081500Z-k3f7qa --from origin   in a fresh clone: checked out on handoff/<cycle>, then the lease',
    'handoff accept --latest --as laptop',
    'handoff accept --latest --return   the primary takes the work back into its work tree',
  ],
  verify: ['handoff verify --latest', 'handoff verify 20261129T081500Z-k3f7qa --from origin'],
  list: ['handoff list', 'handoff list --all --json'],
  lease: ['handoff lease', 'handoff lease acquire --as me', 'handoff lease release --token 3', 'handoff lease break --reason "the laptop is gone"'],
};

/** commander lists headings in the order their first command was registered; these go in GROUPS order. */
function byGroupOrder<T extends Command | Option>(unsorted: T[], visible: T[], getGroup: (item: T) => string): Map<string, T[]> {
  // commander's own grouping keeps no state: a fresh Help does it, then only the order changes.
  const groups = new Help().groupItems(unsorted, visible, getGroup);
  // commander's own heading (`Commands:`, for `help`) goes last.
  const rank = (heading: string) => {
    const index = GROUPS.indexOf(heading.replace(/:$/, '') as Group);
    return index === -1 ? GROUPS.length : index;
  };
  return new Map([...groups].sort(([a], [b]) => rank(a) - rank(b)));
}

/** The help heading of a top-level command; one a module added without a heading goes under "Other commands". */
export function groupOf(name: string): Group {
  const module = COMMAND_MODULES.find((m) => m.names.includes(name));
  return module?.groupOf?.[name] ?? module?.group ?? 'Other commands';
}

/** The first operand of `args` (argv without node and the script): the command, past global options. */
export function commandName(program: Command, args: readonly string[]): string | undefined {
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
    .version(version, '-v, --version', 'print the version')
    .option('--json', 'print exactly one JSON object (the Envelope) on stdout')
    .option('--repo <dir>', 'the repository (default: the git root of the current directory)')
    .option('--state-dir <dir>', 'the daemon state dir (default: $HANDOFF_STATE_DIR, $XDG_STATE_HOME/session-handoff, ~/.local/state/session-handoff)')
    .helpOption('-h, --help', 'print this help')
    .configureHelp({ groupItems: byGroupOrder })
    .addHelpText('after', EXAMPLES)
    // An error is one short `error:` and `hint:` (run-program.ts), never followed by the whole help.
    .configureOutput({ outputError: () => undefined })
    .exitOverride();
  const name = argv === undefined ? undefined : commandName(program, argv.slice(2));
  const named = COMMAND_MODULES.find((module) => name !== undefined && module.names.includes(name));
  for (const register of await Promise.all((named === undefined ? COMMAND_MODULES : [named]).map((module) => module.load()))) register(program);
  for (const command of program.commands) {
    const examples = COMMAND_EXAMPLES[command.name()];
    if (examples !== undefined) command.addHelpText('after', `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}`);
  }
  // Grouped after registration, so a module's own file stays free of help layout.
  for (const group of GROUPS) for (const command of program.commands) if (groupOf(command.name()) === group) command.helpGroup(`${group}:`);
  for (const command of program.commands) inheritExit(command);
  return program;
}

function inheritExit(command: Command): void {
  command.exitOverride().configureOutput({ outputError: () => undefined });
  for (const child of command.commands) inheritExit(child);
}
