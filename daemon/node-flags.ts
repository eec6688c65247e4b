/**
 * The V8 flags of every daemon the CLI starts itself: the start on demand (daemon/cli/auto-start.ts)
 * and the service unit (daemon/service-unit/). While the daemon loads, V8's young generation grows to
 * two 16 MB semi-spaces and keeps them touched for good: 1 MB each takes ~12 MB off the resident set
 * after 200 readings (docs/performance/daemon.md). V8 reads it only when the heap is set up, so it is
 * a command-line flag; `v8.setFlagsFromString` at run time was measured to change nothing.
 */
export const DAEMON_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1'];
