import { readFileSync } from 'node:fs';
import { isErrno } from './errno.js';

/**
 * Whether `pid` still runs a process that could be a handoff daemon. Signal 0 probes without
 * delivering anything: ESRCH means gone, EPERM means alive under another user. A pid the kernel
 * has handed to an unrelated program (seen in /proc on Linux) counts as gone, or a crash followed
 * by pid reuse would lock the daemon out until someone removed the lock by hand.
 */
export function isProcessAlive(pid: number): boolean {
  // kill(0) and kill(-n) address process groups; never let a bad record widen the probe.
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (isErrno(error, 'ESRCH')) return false;
    if (!isErrno(error, 'EPERM')) throw error;
  }
  const cmdline = readCommandLine(pid);
  return cmdline === null || commandLineMayBeDaemon(cmdline);
}

/**
 * Deliberately lenient: any argument mentioning node or handoff keeps the pid alive, because
 * wrongly taking over a live daemon is worse than asking the user to remove a stale lock.
 * An empty command line (zombies, kernel threads) tells nothing, so it also counts as alive.
 */
export function commandLineMayBeDaemon(cmdline: string): boolean {
  const args = cmdline.split('\0').filter((arg) => arg !== '');
  if (args.length === 0) return true;
  return args.some((arg) => /node|handoff/i.test(arg));
}

/** null when the command line cannot be read: not Linux, no /proc, or the process just exited. */
function readCommandLine(pid: number): string | null {
  if (process.platform !== 'linux') return null;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1');
  } catch (error) {
    if (isErrno(error, 'ENOENT', 'EACCES', 'ESRCH', 'EPERM')) return null;
    throw error;
  }
}
