import { spawn } from 'node:child_process';
import { RELAUNCHED } from '../node-flags.js';

const FORWARDED: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Runs this very command again in a node started with `flags`, and ends as it ends: Node 20 has no
 * execve, so this process stays, passes its stdio on and forwards the signals that stop a daemon.
 * The new node leads its own process group: a Ctrl-C in the terminal then reaches it once, through
 * here, and not a second time straight from the terminal (a second SIGINT would skip the graceful stop).
 * Resolves false, having started nothing, when no node could be started: the caller runs unchanged.
 */
export function relaunch(flags: readonly string[]): Promise<boolean> {
  const child = spawn(process.execPath, [...flags, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    detached: true,
    env: { ...process.env, [RELAUNCHED]: '1' },
  });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  for (const signal of FORWARDED) process.on(signal, forward);
  const stopForwarding = () => {
    for (const signal of FORWARDED) process.off(signal, forward);
  };
  return new Promise((resolve) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      stopForwarding();
      process.stderr.write(`handoff: could not start node again with ${flags.join(' ')} (${error.code ?? error.message}); running without them\n`);
      resolve(false);
    });
    child.once('exit', (code, signal) => {
      stopForwarding();
      // Ended by a signal: this process ends by the same one, so whoever started it sees what happened.
      if (signal !== null) process.kill(process.pid, signal);
      else process.exitCode = code ?? 1;
      resolve(true);
    });
  });
}
