#!/usr/bin/env node
// `handoff hook …` runs on every status line refresh and before file edits: it is answered before
// commander and the protocol (which pulls in xstate) are loaded, so it starts about as fast as node.
if (process.argv[2] === 'hook') {
  const { runHookArgs } = await import('./hook-entry.js');
  process.exitCode = await runHookArgs(process.argv.slice(3));
} else {
  const { runProgram } = await import('./run-program.js');
  await runProgram();
}
