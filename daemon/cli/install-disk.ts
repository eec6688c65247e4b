import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { link, lstat, mkdir, open, readFile, realpath, rename, rm, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { InstallIo, PathFacts, PlannedWrite } from '../../adapters/agents/index.js';
import { HandoffError } from '../../protocol/index.js';
import { fsyncDir } from '../store/index.js';
import { errnoOf, isErrno } from '../store/errno.js';

const NEW_FILE_MODE = 0o644;
/** Settings can hold API keys in `env`: a backup is readable by its owner only. */
const BACKUP_MODE = 0o600;

/** ENOTDIR: a path under a regular file holds nothing, as a missing one. */
const isMissing = (error: unknown) => isErrno(error, 'ENOENT', 'ENOTDIR');

async function inspect(path: string): Promise<PathFacts> {
  try {
    const facts = await lstat(path);
    const kind = facts.isSymbolicLink() ? 'symlink' : facts.isFile() ? 'file' : facts.isDirectory() ? 'directory' : 'other';
    return { kind, writable: (facts.mode & 0o200) !== 0 };
  } catch (error) {
    if (isMissing(error)) return { kind: 'missing', writable: true };
    throw error;
  }
}

async function modeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).mode & 0o777;
  } catch (error) {
    if (isMissing(error)) return NEW_FILE_MODE;
    throw error;
  }
}

const tempName = (path: string): string => join(dirname(path), `.${basename(path)}.handoff-install.${process.pid}.${randomBytes(6).toString('hex')}`);

/** A complete, synced copy of `text` beside `path`, under a name nobody else can have picked. */
async function stage(path: string, text: string, mode: number): Promise<string> {
  const temp = tempName(path);
  // O_EXCL | O_NOFOLLOW: a name planted between picking it and opening it is refused, not followed.
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  try {
    await handle.chmod(mode);
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return temp;
}

/** Runs every undo step, newest first; the ones that fail are named, none hides the others. */
async function undo(steps: readonly (() => Promise<unknown>)[]): Promise<string[]> {
  const failed: string[] = [];
  for (const step of [...steps].reverse()) {
    try {
      await step();
    } catch (error) {
      failed.push((error as Error).message);
    }
  }
  return failed;
}

/**
 * All or nothing: each file is staged beside its target (directories created as needed), each
 * backup is created once, and only then are the staged files renamed into place. A failure at any
 * step undoes the steps before it — staged files and backups removed, replaced files given their
 * previous bytes back, created files and directories removed — so every file stays as it was.
 */
async function commit(writes: readonly PlannedWrite[]): Promise<void> {
  const undoSteps: (() => Promise<unknown>)[] = [];
  let current = '';
  try {
    const staged: { path: string; temp: string | null; before: string | null; mode: number }[] = [];
    for (const write of writes) {
      current = write.path;
      // A file that goes (an uninstall) is unlinked with the others, last; its bytes are restored on undo.
      if (write.text === null) {
        staged.push({ path: write.path, temp: null, before: write.before, mode: await modeOf(write.path) });
        continue;
      }
      const created = await mkdir(dirname(write.path), { recursive: true });
      if (created !== undefined) undoSteps.push(() => rm(created, { recursive: true, force: true }));
      const mode = await modeOf(write.path);
      const temp = await stage(write.path, write.text, mode);
      undoSteps.push(() => rm(temp, { force: true }));
      staged.push({ path: write.path, temp, before: write.before, mode });
    }
    for (const write of writes) {
      if (write.backup === null) continue;
      const { path, text } = write.backup;
      current = path;
      // link() never follows or replaces anything at the backup's name.
      const temp = await stage(path, text, BACKUP_MODE);
      try {
        await link(temp, path);
      } finally {
        await unlink(temp);
      }
      undoSteps.push(() => unlink(path));
    }
    for (const { path, temp, before, mode } of staged) {
      current = path;
      if (temp === null) await unlink(path);
      else await rename(temp, path);
      undoSteps.push(before === null ? () => unlink(path) : async () => rename(await stage(path, before, mode), path));
    }
    const touched = [...staged.map(({ path }) => path), ...writes.flatMap((write) => (write.backup === null ? [] : [write.backup.path]))];
    for (const dir of new Set(touched.map((path) => dirname(path)))) await fsyncDir(dir);
  } catch (error) {
    const failed = await undo(undoSteps);
    const cause = `${errnoOf(error) ?? 'error'}: ${(error as Error).message}`;
    throw new HandoffError(
      'install_failed',
      failed.length === 0
        ? `could not write ${current} (${cause}); every file was left as it was`
        : `could not write ${current} (${cause}), and undoing the install failed too: ${failed.join('; ')}`,
      'fix what kept the file from being written (permissions, a full disk, a file where a directory should be), then install again',
    );
  }
}

/** The nearest directory above `path`, by name, holding `.git` (a directory, or the file of a worktree). */
async function repositoryOf(path: string): Promise<string | null> {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if ((await inspect(join(dir, '.git'))).kind !== 'missing') return dir;
    if (dirname(dir) === dir) return null;
  }
}

/** The real file system for `handoff install`. */
export const diskIo: InstallIo = {
  async read(path) {
    try {
      return await readFile(path, 'utf8');
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  },
  inspect,
  async realpath(path) {
    try {
      return await realpath(path);
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  },
  repositoryOf,
  commit,
};
