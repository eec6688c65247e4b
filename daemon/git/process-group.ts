import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

export interface Launcher {
  /** simple-git's `binary` option. */
  readonly binary: 'git' | ['setsid', 'git'];
  /** What precedes git's own arguments in the spawned argv. */
  readonly argv0: readonly string[];
  /** git leads its own process group, so a kill reaches every process it started. */
  readonly grouped: boolean;
}

async function onPath(name: string, path: string | undefined): Promise<boolean> {
  for (const dir of (path ?? '').split(delimiter).filter(Boolean)) {
    if (
      await access(join(dir, name), constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return true;
  }
  return false;
}

const launchers = new Map<string, Promise<Launcher>>();

/**
 * simple-git spawns git in the daemon's process group and passes on no `detached` option, so on a
 * timeout it can only signal git itself, and a filter, credential helper or ssh git started would
 * outlive the call. The smallest workaround keeps the library: git is started through setsid(1)
 * (util-linux), which execs it as the leader of a new session and process group, the same as the
 * old runner's `detached: true`; killGroup then kills that whole group. Without setsid (macOS)
 * only git itself is killed.
 */
export function groupLauncher(path: string | undefined): Promise<Launcher> {
  // Looked up once per PATH: a drain makes dozens of git calls, and each one walked the PATH
  // directories again (an access() per directory; docs/performance/evacuation.md).
  const key = path ?? '';
  let found = launchers.get(key);
  if (found === undefined) {
    found = onPath('setsid', path).then((grouped): Launcher =>
      grouped ? { binary: ['setsid', 'git'], argv0: ['setsid', 'git'], grouped: true } : { binary: 'git', argv0: ['git'], grouped: false },
    );
    launchers.set(key, found);
  }
  return found;
}

export function killGroup(child: ChildProcess, grouped: boolean, signal: 'SIGTERM' | 'SIGKILL'): void {
  if (child.pid === undefined) return;
  try {
    if (grouped) process.kill(-child.pid, signal);
    else child.kill(signal);
  } catch (error) {
    // Already gone: the group ended between the timeout and the kill.
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}
