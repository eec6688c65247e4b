import { readFileSync } from 'node:fs';
import { CommanderError } from 'commander';
import { exitCodeOf, failure, fromError, isHandoffError, type Envelope } from '../../protocol/index.js';
import { printable, printableJson } from '../../protocol/printable.js';
import { buildProgram } from './program.js';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
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

/** Every command but the hooks: commander, the protocol and the HTTP client. */
export async function runProgram(): Promise<void> {
  try {
    await (await buildProgram(pkg.version, process.argv)).parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      const helpOrVersion = error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help';
      if (helpOrVersion) process.exitCode = 0;
      else if (wantsJson) fail(failure('usage_error', error.message.replace(/^error: /, ''), 'see `handoff --help`'));
      else process.exitCode = 64;
    } else if (isHandoffError(error)) {
      fail(fromError(error));
    } else {
      fail(failure('internal_error', (error as Error).message, 'this is a bug in handoff; please report it with the command line'));
    }
  }
}
