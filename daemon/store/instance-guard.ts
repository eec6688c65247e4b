import type { BigIntStats } from 'node:fs';
import { constants } from 'node:fs';
import { link, lstat, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { HandoffError } from '../../protocol/errors.js';
import { AlreadyExistsError, fsyncDir, siblingTempPath, writeFileCreateOnce } from './atomic-write.js';
import { isErrno } from './errno.js';
import { isProcessAlive } from './process-liveness.js';
import { shellQuote } from '../../protocol/shell-quote.js';

export const LOCK_FILE = 'daemon.lock';
const LOCK_MODE = 0o600;
// Each round either wins, meets a live holder, or clears one stale lock; a few rounds absorb
// starters that crash mid-takeover without letting a pathological loop spin forever.
const MAX_ROUNDS = 4;
const PID_TEXT = /^([1-9][0-9]{0,9})\n?$/;

export interface InstanceGuard {
  /** Removes the lock if it is still ours; safe to call twice. */
  release(): Promise<void>;
}

/** Which file a decision was made about: a lock replaced since has another inode or mtime. */
interface Identity {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly mtimeNs: bigint;
}

type LockHolder =
  | { readonly kind: 'missing' }
  | { readonly kind: 'directory' }
  | { readonly kind: 'present'; readonly pid: number | null; readonly raw: string; readonly identity: Identity };

/**
 * Makes this process the only daemon for `dir`. The lock is a complete file linked into place, so
 * it appears atomically and exactly one of several starters creates it. A lock left by a dead
 * process, by a pid the kernel reused, by our own pid (a restart inside a pid namespace), or with
 * unreadable content is taken over.
 */
export async function acquireInstanceGuard(dir: string, pid: number, isAlive: (pid: number) => boolean = isProcessAlive): Promise<InstanceGuard> {
  const lockPath = join(dir, LOCK_FILE);
  let lastHolder: number | null = null;
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    try {
      await writeFileCreateOnce(lockPath, `${pid}\n`, LOCK_MODE);
      return guardFor(lockPath, pid, identityOf(await lstat(lockPath, { bigint: true })));
    } catch (error) {
      if (!(error instanceof AlreadyExistsError)) throw error;
    }
    const holder = await readLock(lockPath);
    if (holder.kind === 'missing') continue;
    if (holder.kind === 'directory') {
      throw new HandoffError('corrupt_record', `lock ${lockPath} is a directory`, `remove it (rmdir ${shellQuote(lockPath)}) and start the daemon again`, {
        path: lockPath,
      });
    }
    if (holder.pid !== null && holder.pid !== pid && isAlive(holder.pid)) {
      throw alreadyRunning(dir, lockPath, holder.pid);
    }
    lastHolder = holder.pid;
    await removeIfUnchanged(dir, lockPath, holder);
  }
  // Every round lost to a starter that then vanished or was itself stale: refuse rather than guess.
  throw alreadyRunning(dir, lockPath, lastHolder);
}

function guardFor(lockPath: string, pid: number, ours: Identity): InstanceGuard {
  let released = false;
  return {
    async release(): Promise<void> {
      if (released) return;
      released = true;
      const holder = await readLock(lockPath);
      // A successor that took over (say, it judged us dead) owns the name now; leave its lock.
      if (holder.kind !== 'present' || holder.pid !== pid || !sameIdentity(holder.identity, ours)) return;
      try {
        await unlink(lockPath);
      } catch (error) {
        if (isErrno(error, 'ENOENT')) return;
        throw error;
      }
      await fsyncDir(dirname(lockPath));
    },
  };
}

/**
 * Removes the stale lock we examined and nothing else. There is no compare-and-unlink, so the lock
 * is renamed aside (only one racer can move a given file) and checked: if what moved is not the
 * file we judged stale, another starter already replaced it, and its lock is linked back.
 */
async function removeIfUnchanged(dir: string, lockPath: string, stale: LockHolder & { kind: 'present' }): Promise<void> {
  const aside = siblingTempPath(lockPath, 'stale');
  try {
    await rename(lockPath, aside);
  } catch (error) {
    // Someone else already cleared it; the next round competes for the free name.
    if (isErrno(error, 'ENOENT')) return;
    throw error;
  }
  const moved = await lstat(aside, { bigint: true });
  const unchanged = sameIdentity(identityOf(moved), stale.identity) && (moved.isSymbolicLink() || (await readFile(aside, 'latin1')) === stale.raw);
  if (!unchanged) {
    try {
      await link(aside, lockPath);
    } catch (error) {
      // A third starter took the empty name in between; both it and the lock's owner now run.
      // Restoring is impossible without deleting a live lock, so surface it loudly.
      if (isErrno(error, 'EEXIST')) {
        await unlink(aside);
        throw new HandoffError(
          'daemon_already_running',
          `several daemons started at once for ${dir} and the lock ${lockPath} changed hands during takeover`,
          'stop every running daemon with `handoff daemon stop`, then start one',
          { dir, lock: lockPath },
        );
      }
      throw error;
    }
  }
  await unlink(aside);
  await fsyncDir(dir);
}

async function readLock(lockPath: string): Promise<LockHolder> {
  let handle;
  try {
    // O_NOFOLLOW: a planted symlink is judged as itself (garbage), never by the file it points to.
    handle = await open(lockPath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return { kind: 'missing' };
    if (isErrno(error, 'ELOOP')) return symlinkHolder(lockPath);
    throw error;
  }
  try {
    const stat = await handle.stat({ bigint: true });
    if (stat.isDirectory()) return { kind: 'directory' };
    const raw = (await handle.readFile()).toString('latin1');
    const match = PID_TEXT.exec(raw);
    const pid = match?.[1] === undefined ? null : Number(match[1]);
    return { kind: 'present', pid, raw, identity: identityOf(stat) };
  } finally {
    await handle.close();
  }
}

async function symlinkHolder(lockPath: string): Promise<LockHolder> {
  try {
    return { kind: 'present', pid: null, raw: '', identity: identityOf(await lstat(lockPath, { bigint: true })) };
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return { kind: 'missing' };
    throw error;
  }
}

function identityOf(stat: BigIntStats): Identity {
  return { dev: stat.dev, ino: stat.ino, mtimeNs: stat.mtimeNs };
}

function sameIdentity(a: Identity, b: Identity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.mtimeNs === b.mtimeNs;
}

function alreadyRunning(dir: string, lockPath: string, pid: number | null): HandoffError {
  const who = pid === null ? 'another daemon' : `another daemon (pid ${pid})`;
  return new HandoffError(
    'daemon_already_running',
    `${who} already serves ${dir}`,
    `stop it with \`handoff daemon stop\`, or, if ${pid === null ? 'no daemon runs' : `pid ${pid} is not a handoff daemon`}, ` +
      `remove ${shellQuote(lockPath)} and start again`,
    { dir, lock: lockPath, pid },
  );
}
