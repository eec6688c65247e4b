import { missingDaemonFlags, RELAUNCHED } from '../node-flags.js';

/** The options that take a value (daemon/cli/program.ts, `daemon --port`): the word after them is not a command. */
const VALUED = new Set(['--repo', '--state-dir', '--port']);

/** Whether the arguments run the daemon in the foreground (`handoff [options] daemon [options]`, not `daemon stop`). */
function runsDaemon(args: readonly string[]): boolean {
  const words = args.filter((arg, i) => !arg.startsWith('-') && !VALUED.has(args[i - 1] ?? ''));
  return words[0] === 'daemon' && !words.includes('stop');
}

/**
 * The daemon's V8 flags (daemon/node-flags.ts) this command must start node again with: none unless it
 * runs the daemon without them, and none for the daemon so started (the marker is taken out of the
 * environment here, so nothing the daemon starts inherits it).
 */
export function flagsToAdd(args: readonly string[], execArgv: readonly string[], env: NodeJS.ProcessEnv): readonly string[] {
  const relaunched = env[RELAUNCHED] === '1';
  Reflect.deleteProperty(env, RELAUNCHED);
  return relaunched || !runsDaemon(args) ? [] : missingDaemonFlags(execArgv);
}
