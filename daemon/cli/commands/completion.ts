import { Argument, type Command } from 'commander';
import { success } from '../../../protocol/index.js';
import { action } from '../context.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

/** One command as completion sees it: its words, its flags, the values its first argument takes. */
export interface CompletionNode {
  readonly name: string;
  readonly summary: string;
  readonly flags: readonly string[];
  readonly choices: readonly string[];
  /** Its first argument is a cycle id: the script asks `handoff list` for the known ones. */
  readonly cycles: boolean;
  readonly commands: readonly CompletionNode[];
}

/** The known cycle ids, from the daemon that runs (never one started for a keystroke), one per line. */
const CYCLE_IDS = `HANDOFF_NO_AUTO_START=1 handoff list --json 2>/dev/null | grep -o '"cycle": *"[^"]*"' | cut -d'"' -f4`;

/** The command table as commander holds it once every module registered (help's view). */
export function completionTree(command: Command): CompletionNode {
  const flags = command.options.flatMap((option) => [option.long, option.short].filter((flag): flag is string => flag !== undefined));
  return {
    name: command.name(),
    summary: command.description().split(/[:;(]/)[0]?.trim() ?? '',
    flags: [...flags, '--help'],
    choices: command.registeredArguments[0]?.argChoices ?? [],
    cycles: command.registeredArguments[0]?.name() === 'cycle',
    commands: command.commands.map(completionTree),
  };
}

/** Every command path below the root, `""` for the root itself, each with its node. */
function paths(node: CompletionNode, prefix = ''): [string, CompletionNode][] {
  return [[prefix, node], ...node.commands.flatMap((child) => paths(child, `${prefix} ${child.name}`))];
}

const words = (node: CompletionNode) => [...node.commands.map((c) => c.name), ...node.choices, ...node.flags].join(' ');

/**
 * bash: the words typed so far that are command names at their level make the path; the path picks
 * the candidates (a cycle id's from the daemon). Anything else (a flag's value) falls back to file names (`-o default`).
 */
function bash(root: CompletionNode): string {
  const all = paths(root);
  const known = all
    .slice(1)
    .map(([path]) => `"${path}"`)
    .join('|');
  const cases = all.map(([path, node]) => `    "${path}") words="${words(node)}${node.cycles ? ` $(${CYCLE_IDS})` : ''}" ;;`).join('\n');
  return [
    `# handoff completion for bash: eval "$(handoff completion bash)" in ~/.bashrc`,
    '_handoff() {',
    '  local cur="${COMP_WORDS[COMP_CWORD]}" path="" words="" i',
    '  for ((i = 1; i < COMP_CWORD; i++)); do',
    '    case "$path ${COMP_WORDS[i]}" in',
    `      ${known}) path="$path \${COMP_WORDS[i]}" ;;`,
    '    esac',
    '  done',
    '  case "$path" in',
    cases,
    '  esac',
    '  COMPREPLY=($(compgen -W "$words" -- "$cur"))',
    '}',
    'complete -o default -F _handoff handoff',
    '',
  ].join('\n');
}

/** zsh runs the bash function through its own bashcompinit: one script to keep true, not two. */
function zsh(root: CompletionNode): string {
  return [
    `# handoff completion for zsh: eval "$(handoff completion zsh)" in ~/.zshrc (after compinit)`,
    'autoload -U +X bashcompinit && bashcompinit',
    bash(root).split('\n').slice(1).join('\n'),
  ].join('\n');
}

const fishQuote = (text: string) => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

/** fish: one `complete` line per command, flag and choice, guarded by the commands seen before it. */
function fish(root: CompletionNode): string {
  const lines = [`# handoff completion for fish: handoff completion fish > ~/.config/fish/completions/handoff.fish`, 'complete -c handoff -f'];
  for (const [path, node] of paths(root)) {
    const seen = path.trim() === '' ? [] : path.trim().split(' ');
    const condition = seen.length === 0 ? '__fish_use_subcommand' : seen.map((name) => `__fish_seen_subcommand_from ${name}`).join('; and ');
    const guard = `-n ${fishQuote(condition)}`;
    for (const child of node.commands) lines.push(`complete -c handoff ${guard} -a ${child.name} -d ${fishQuote(child.summary)}`);
    for (const choice of node.choices) lines.push(`complete -c handoff ${guard} -a ${choice}`);
    if (node.cycles) lines.push(`complete -c handoff ${guard} -a ${fishQuote(`(${CYCLE_IDS})`)}`);
    for (const flag of node.flags) lines.push(`complete -c handoff ${guard} ${flag.startsWith('--') ? `-l ${flag.slice(2)}` : `-s ${flag.slice(1)}`}`);
  }
  return `${lines.join('\n')}\n`;
}

export function completionScript(shell: Shell, root: CompletionNode): string {
  return { bash, zsh, fish }[shell](root);
}

export function registerCompletion(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script for bash, zsh or fish, generated from the command table (how to load it is its first line)')
    .addArgument(new Argument('<shell>').choices(SHELLS))
    .action(
      action(
        async (_ctx, shell: Shell) => {
          // Only this module is loaded for `handoff completion`: the whole table is built here, as for help.
          const { buildProgram } = await import('../program.js');
          const script = completionScript(shell, completionTree(await buildProgram(program.version() ?? '0.0.0')));
          return success('ok', { shell, script });
        },
        (data: { script: string }) => data.script.trimEnd(),
      ),
    );
}
