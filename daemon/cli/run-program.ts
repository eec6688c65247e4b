import { CommanderError, type Command } from 'commander';
// The protocol's own files, not its index: the index loads the workspace machine (xstate) and every
// schema, which a command that only talks to the daemon does not need (test/bench/evacuation.bench.mjs).
import { exitCodeOf, failure, fromError, type Envelope } from '../../protocol/envelope.js';
import { isHandoffError } from '../../protocol/errors.js';
import { printable, printableJson } from '../../protocol/printable.js';
import { ownPackage } from '../package-root.js';
import { buildProgram, commandName, groupOf } from './program.js';
import { usageFailure, type Stray } from './usage-failure.js';

const wantsJson = process.argv.includes('--json');

/** The one place that turns failures into an exit code: commands return Envelopes or throw. */
function fail(envelope: Envelope): void {
  if (wantsJson) process.stdout.write(`${printableJson(envelope)}\n`);
  else
    process.stderr.write(
      `error: ${printable(envelope.error?.message ?? envelope.code, { lines: true })}\nhint: ${printable(envelope.error?.hint ?? '', { lines: true })}\n`,
    );
  process.exitCode = exitCodeOf(envelope);
}

/**
 * The words of the command line commander matched (`handoff lease` in `handoff lease aquire`), and
 * the first operand after them when that command has subcommands: a subcommand mistyped.
 */
function commandPath(program: Command, args: readonly string[]): { path: string; stray?: Stray } {
  const path: string[] = [];
  let at: Command = program;
  let stray: Stray | undefined;
  for (const arg of args) {
    const next = at.commands.find((c) => c.name() === arg || c.aliases().includes(arg));
    if (next !== undefined) {
      path.push(next.name());
      at = next;
    } else if (stray === undefined && !arg.startsWith('-') && path.length > 0 && at.commands.length > 0) {
      stray = { word: arg, names: at.commands.map((c) => c.name()) };
    }
  }
  return { path: ['handoff', ...path].join(' '), ...(stray !== undefined && { stray }) };
}

/** Bare `handoff`: the core commands and where the rest are, on stderr (a command was expected). */
function shortHelp(program: Command): string {
  const core = program.commands.filter((c) => groupOf(c.name()) === 'Core commands');
  const width = Math.max(...core.map((c) => c.name().length));
  // The first clause of each description: one line each, the full words are in `--help`.
  const lines = core.map((c) => `  ${c.name().padEnd(width)}  ${c.description().split(/[;(]/)[0]?.trim() ?? ''}`);
  return [
    `handoff ${ownPackage().version}: hand a dying coding-agent session over with a verified checkpoint and one lease`,
    '',
    'Usage: handoff <command> [options]',
    '',
    'Core commands:',
    ...lines,
    '',
    'Run `handoff --help` for every command (setup, the lease, agent plumbing) and examples.',
  ].join('\n');
}

const HELP_OR_VERSION = new Set(['-h', '--help', '-v', '--version', 'help']);

/** Every command but the hooks: commander, the protocol and the HTTP client. */
export async function runProgram(): Promise<void> {
  const args = process.argv.slice(2);
  let program: Command | null = null;
  try {
    program = await buildProgram(ownPackage().version, process.argv);
    // No command is a usage error (64, docs/codes.md): exit 1 belongs to `handoff check`, and a
    // script that ran `handoff` by mistake must not read success. gh answers 0 here; git and npm do not.
    if (commandName(program, args) === undefined && !args.some((a) => HELP_OR_VERSION.has(a))) {
      if (wantsJson) fail(failure('usage_error', 'no command given', 'see `handoff --help`'));
      else {
        process.stderr.write(`${shortHelp(program)}\n`);
        process.exitCode = 64;
      }
      return;
    }
    await program.parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      const helpOrVersion = error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help';
      if (helpOrVersion) process.exitCode = 0;
      else {
        const { path, stray } = program === null ? { path: 'handoff', stray: undefined } : commandPath(program, args);
        fail(usageFailure(error, path, stray));
      }
    } else if (isHandoffError(error)) {
      fail(fromError(error));
    } else {
      fail(failure('internal_error', (error as Error).message, 'this is a bug in handoff; please report it with the command line'));
    }
  }
}
