import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { link, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isErrno } from './errno.js';

/** The target of a create-once write already exists (a file, a directory or a planted symlink). */
export class AlreadyExistsError extends Error {
  readonly path: string;

  constructor(path: string) {
    super(`${path} already exists; it is written once and never replaced`);
    this.name = 'AlreadyExistsError';
    this.path = path;
  }
}

/**
 * Replaces `path` with `data` so that a crash leaves either the old or the new content, never a
 * mix: the bytes reach the disk in a temp file before the rename makes them visible, and the
 * directory is synced so the rename itself survives a power loss. A symlink at `path` is replaced,
 * not written through, because rename() acts on the directory entry.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode: number): Promise<void> {
  const temp = await writeTemp(path, data, mode);
  try {
    await rename(temp, path);
  } catch (error) {
    throw await withCleanup(error, temp);
  }
  await fsyncDir(dirname(path));
}

/**
 * Writes `path` only if nothing exists there yet. link() fails with EEXIST on any existing entry,
 * dangling symlinks included, and never follows one, so of two racers exactly one wins and the
 * winner's file is complete the moment it appears.
 */
export async function writeFileCreateOnce(path: string, data: string | Uint8Array, mode: number): Promise<void> {
  const temp = await writeTemp(path, data, mode);
  try {
    await link(temp, path);
  } catch (error) {
    throw await withCleanup(isErrno(error, 'EEXIST') ? new AlreadyExistsError(path) : error, temp);
  }
  await removeTemp(temp);
  await fsyncDir(dirname(path));
}

/** Makes renames, links and unlinks in `dir` durable; a synced file is not enough on its own. */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A name no other writer (another process, or a concurrent call here) can pick. */
export function siblingTempPath(path: string, purpose = 'tmp'): string {
  return join(dirname(path), `.${basename(path)}.${purpose}.${process.pid}.${randomBytes(6).toString('hex')}`);
}

async function writeTemp(path: string, data: string | Uint8Array, mode: number): Promise<string> {
  const temp = siblingTempPath(path);
  // O_EXCL | O_NOFOLLOW: a name planted between picking it and opening it is refused, not followed.
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const handle = await open(temp, flags, mode);
  try {
    // The umask may have dropped bits from `mode`; the caller asked for exactly this mode.
    await handle.chmod(mode);
    await handle.writeFile(data);
    await handle.sync();
  } catch (error) {
    await handle.close();
    throw await withCleanup(error, temp);
  }
  await handle.close();
  return temp;
}

/** Removes the temp file after a failure without letting a cleanup error hide the failure itself. */
async function withCleanup(failure: unknown, temp: string): Promise<unknown> {
  try {
    await removeTemp(temp);
    return failure;
  } catch (cleanupError) {
    return new AggregateError([failure, cleanupError], `write failed and its temp file ${temp} could not be removed`);
  }
}

async function removeTemp(temp: string): Promise<void> {
  try {
    await unlink(temp);
  } catch (error) {
    // Already gone is the goal; anything else would hide a real problem with the directory.
    if (!isErrno(error, 'ENOENT')) throw error;
  }
}
