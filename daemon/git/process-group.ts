import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';

export interface Launcher {
  /** simple-git's `binary` option: absolute paths, so no PATH is searched again per call. */
  readonly binary: string | [string, string];
  /** What precedes git's own arguments in the spawned argv. */
  readonly argv0: readonly string[];
  /** git leads its own process group, so a kill reaches every process it started. */
  readonly grouped: boolean;
}

/**
 * The first executable file called `name` in PATH's directories, in their order, as execvp would
 * find it; null when there is none. Relative entries (`.`, an empty one) are skipped: libuv would
 * resolve them in the repository git runs in, where a committed `git` could wait.
 */
export async function findOnPath(name: string, path: string | undefined): Promise<string | null> {
  for (const dir of (path ?? '').split(delimiter).filter(isAbsolute)) {
    const candidate = join(dir, name);
    const executable = await stat(candidate)
      .then((found) => found.isFile() && access(candidate, constants.X_OK).then(() => true))
      .catch(() => false);
    if (executable) return candidate;
  }
  return null;
}

const launchers = new Map<string, Promise<Launcher | null>>();

/**
 * simple-git spawns git in the daemon's process group and passes on no `detached` option, so on a
 * timeout it can only signal git itself, and a filter, credential helper or ssh git started would
 * outlive the call. The smallest workaround keeps the library: git is started through setsid(1)
 * (util-linux), which execs it as the leader of a new session and process group, the same as the
 * old runner's `detached: true`; killGroup then kills that whole group. Without setsid (macOS)
 * only git itself is killed.
 *
 * setsid stays on every call although it costs one more exec (docs/performance/evacuation.md): which
 * call starts a program is the repository's to decide (a filter, commit.gpgSign, a partial clone's lazy
 * fetch), not the subcommand's.
 *
 * Resolved once per PATH, to absolute paths: by name, libuv searched PATH for setsid and setsid searched
 * it again for git (a failed execve per entry before the right one, on every call). No git is not
 * remembered, so one installed later is found by the next call (the hint says `handoff resume`).
 */
export function groupLauncher(path: string | undefined): Promise<Launcher | null> {
  const key = path ?? '';
  const known = launchers.get(key);
  if (known !== undefined) return known;
  const found = Promise.all([findOnPath('git', path), findOnPath('setsid', path)]).then(([git, setsid]): Launcher | null => {
    if (git === null) {
      launchers.delete(key);
      return null;
    }
    return setsid === null ? { binary: git, argv0: [git], grouped: false } : { binary: [setsid, git], argv0: [setsid, git], grouped: true };
  });
  launchers.set(key, found);
  return found;
}

/** The absolute git a daemon with this PATH runs, found now; null when PATH holds none. */
export async function resolveGit(path: string | undefined): Promise<string | null> {
  return (await groupLauncher(path))?.argv0.at(-1) ?? null;
}

/** Forgets PATH's git after it could not be started (moved or removed since): the next call searches again. */
export function forgetLauncher(path: string | undefined): void {
  launchers.delete(path ?? '');
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
