import { lstat, mkdir, readdir, readFile, rm, rmdir } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { writeFileAtomic } from '../store/index.js';
import { isErrno } from '../store/errno.js';

/**
 * `<state dir>/install-dirs.json`: the directories `handoff install` created (a `.clinerules/`, a
 * `~/.claude/commands/`). Only a directory named here is ever removed by `handoff uninstall`, and only
 * when it is empty: one the user had before the install is never in it.
 */
export const INSTALL_DIRS_FILE = 'install-dirs.json';

/** The record, or none when it is missing or unreadable: a damaged record removes nothing. */
async function readRecord(stateDir: string): Promise<Set<string>> {
  try {
    const raw: unknown = JSON.parse(await readFile(join(stateDir, INSTALL_DIRS_FILE), 'utf8'));
    const dirs = (raw as { dirs?: unknown } | null)?.dirs;
    return new Set(Array.isArray(dirs) ? dirs.filter((dir): dir is string => typeof dir === 'string' && isAbsolute(dir)) : []);
  } catch {
    return new Set();
  }
}

/**
 * Written crash-safe, with only the directories that still exist (a repository deleted since is
 * forgotten, so the record stays as small as what is on disk); an empty record is removed, so a full
 * uninstall leaves no file of ours.
 */
async function writeRecord(stateDir: string, dirs: ReadonlySet<string>): Promise<void> {
  const kept: string[] = [];
  for (const dir of dirs) if (await exists(dir)) kept.push(dir);
  if (kept.length === 0) return rm(join(stateDir, INSTALL_DIRS_FILE), { force: true });
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  await writeFileAtomic(join(stateDir, INSTALL_DIRS_FILE), `${JSON.stringify({ dirs: kept.sort() }, null, 2)}\n`, 0o600);
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    if (isErrno(error, 'ENOENT', 'ENOTDIR')) return false;
    throw error;
  }
}

/** The directories above each file that do not exist yet: what writing the files will create. */
export async function missingDirs(files: readonly string[]): Promise<string[]> {
  const missing = new Set<string>();
  for (const file of files) {
    for (let dir = dirname(file); dir !== dirname(dir) && !missing.has(dir) && !(await exists(dir)); dir = dirname(dir)) missing.add(dir);
  }
  return [...missing];
}

/** After an install: the directories that were missing before it and exist now are ours. */
export async function recordCreated(stateDir: string, wereMissing: readonly string[]): Promise<void> {
  const created: string[] = [];
  for (const dir of wereMissing) if (await exists(dir)) created.push(dir);
  if (created.length === 0) return;
  const record = await readRecord(stateDir);
  for (const dir of created) record.add(dir);
  await writeRecord(stateDir, record);
}

/** The names in a directory, or null when it is gone or is not one (a link is never followed). */
async function entriesOf(dir: string): Promise<string[] | null> {
  try {
    if (!(await lstat(dir)).isDirectory()) return null;
    return await readdir(dir);
  } catch (error) {
    if (isErrno(error, 'ENOENT', 'ENOTDIR')) return null;
    throw error;
  }
}

/**
 * After an uninstall removed `removed` (or, with `dryRun`, would): the directories install created
 * above them that are, or would be, empty, deepest first. Removed for real with rmdir, which refuses
 * a directory that is not empty (a file the user put there since) and never follows a link.
 */
export async function removeEmptied(stateDir: string, removed: readonly string[], dryRun: boolean): Promise<string[]> {
  const record = await readRecord(stateDir);
  const gone = new Set(removed);
  const emptied: string[] = [];
  const candidates = new Set<string>();
  for (const file of removed) for (let dir = dirname(file); record.has(dir); dir = dirname(dir)) candidates.add(dir);
  // Deepest first, so a parent sees its emptied child as gone.
  for (const dir of [...candidates].sort((a, b) => b.length - a.length)) {
    const entries = await entriesOf(dir);
    if (entries === null) {
      // Gone, or no longer a directory (the user's now): nothing of ours is left to remember.
      record.delete(dir);
      continue;
    }
    if (!entries.every((name) => gone.has(join(dir, name)))) continue;
    if (!dryRun) {
      try {
        await rmdir(dir);
      } catch (error) {
        // Something appeared in it since it was read: it is the user's now, and stays.
        if (isErrno(error, 'ENOTEMPTY', 'EEXIST')) continue;
        throw error;
      }
      record.delete(dir);
    }
    gone.add(dir);
    emptied.push(dir);
  }
  if (!dryRun && candidates.size > 0) await writeRecord(stateDir, record);
  return emptied;
}
