/**
 * The V8 flags of every daemon, however it is started: the start on demand (daemon/cli/auto-start.ts)
 * and the service unit (daemon/service-unit/) pass them; `handoff daemon` and `npm start` started
 * without them start again with them (daemon/cli/relaunch.ts). While the daemon loads, V8's young
 * generation grows to two 16 MB semi-spaces and keeps them touched for good: 1 MB each takes ~12 MB
 * off the resident set after 200 readings (docs/performance/daemon.md). V8 reads it only when the heap
 * is set up, so it is a command-line flag; `v8.setFlagsFromString` at run time was measured to change nothing.
 */
export const DAEMON_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1'];

/** Set for the daemon `handoff daemon` started again with its flags: it is never started a third time. */
export const RELAUNCHED = 'HANDOFF_DAEMON_RELAUNCHED';

/** The daemon's flags this node was not started with; a flag given with a value of the user's own counts as given. */
export function missingDaemonFlags(execArgv: readonly string[]): string[] {
  const named = new Set(execArgv.map((arg) => arg.split('=')[0]));
  return DAEMON_NODE_FLAGS.filter((flag) => !named.has(flag.split('=')[0]));
}
