import { homedir } from 'node:os';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { Envelope } from '../../protocol/envelope.js';
import { HandoffError } from '../../protocol/errors.js';
import { resolveStateDir } from '../store/state-dir.js';
import { callDaemon, type CallOptions } from './client.js';
import { emit, processOutput, type Output } from './output.js';
import type { Renderer } from './render/index.js';

export interface GlobalOptions {
  readonly json?: boolean;
  readonly repo?: string;
  readonly stateDir?: string;
}

/** What every command gets: where the daemon is, which repository, and how to print. */
export interface CommandContext {
  readonly stateDir: string;
  readonly repo: string;
  readonly output: Output;
  call(options: CallOptions): Promise<Envelope>;
}

export function contextOf(command: Command): CommandContext {
  const options = command.optsWithGlobals<GlobalOptions>();
  const stateDir = resolve(options.stateDir ?? resolveStateDir(process.env, homedir()));
  return {
    stateDir,
    repo: resolve(options.repo ?? process.cwd()),
    output: processOutput(options.json === true),
    call: (call) => callDaemon(stateDir, call),
  };
}

/**
 * Runs one command's body and sets the exit code from its Envelope. Only here and in the entry do
 * exit codes exist; commands return Envelopes.
 */
export function action<A extends unknown[]>(
  body: (context: CommandContext, ...args: A) => Promise<Envelope>,
  human: Renderer,
): (...args: [...A, Command]) => Promise<void> {
  return async (...args) => {
    const command = args[args.length - 1] as Command;
    const context = contextOf(command);
    const envelope = await body(context, ...(args.slice(0, -1) as A));
    process.exitCode = emit(context.output, envelope, human);
  };
}

export function usage(message: string, hint: string): never {
  throw new HandoffError('usage_error', message, hint);
}

/**
 * `--used-percent 82.5`, or `unknown` / `null` for a number the agent did not report. A person types
 * it: 0–100 (150 is a typo for 15, not a reading); agents' payloads go through `handoff ingest`, which keeps what they report.
 */
export function parsePercent(value: string): number | null {
  if (value === 'unknown' || value === 'null') return null;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 100)
    usage(
      `--used-percent '${value}' is not a percent from 0 to 100`,
      "give the percent used as the agent shows it (0–100), or `unknown`; an agent's own payload goes through `handoff ingest`",
    );
  return n;
}

/** A value from a fixed list, refused in the CLI's words with the list (not the HTTP schema's). */
export function oneOf<T extends string>(flag: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) usage(`${flag} '${value}' is not one of the allowed values`, `use one of: ${allowed.join(', ')}`);
  return value as T;
}

export function parseInteger(flag: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) usage(`${flag} '${value}' is not a whole number`, `give ${flag} as digits only`);
  return n;
}

export function parseEpochSeconds(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0)
    usage(`--resets-at '${value}' is not epoch seconds`, 'give the reset time as Unix epoch seconds, as the agent reports it');
  return n;
}
