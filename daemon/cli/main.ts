#!/usr/bin/env node
import { flagsToAdd } from './daemon-flags.js';

// `handoff hook …` runs on every status line refresh and before file edits: it is answered before
// commander and the protocol (which pulls in xstate) are loaded, so it starts about as fast as node.
// `handoff --version` alone is answered the same way: loading the program to print one line cost
// more than `handoff status` (test/bench/version.bench.mjs).
const first = process.argv[2];
const missing = flagsToAdd(process.argv.slice(2), process.execArgv, process.env);
if (first === 'hook') {
  const { runHookArgs } = await import('./hook-entry.js');
  process.exitCode = await runHookArgs(process.argv.slice(3));
} else if ((first === '--version' || first === '-V') && process.argv.length === 3) {
  const { ownPackage } = await import('../package-root.js');
  process.stdout.write(`${ownPackage().version}\n`);
} else if (missing.length === 0 || !(await (await import('./relaunch.js')).relaunch(missing))) {
  const { runProgram } = await import('./run-program.js');
  await runProgram();
}
