import { lstatSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { errnoOf, isErrno } from './errno.js';

/**
 * `mkdir -p` that fails instead of spinning: Node's recursive mkdir loops forever, burning a core,
 * when a file system answers ENOENT although the parent exists (`/proc/x`). Walks up to the first
 * existing ancestor, then makes each missing directory with a plain mkdir. Answers the first
 * directory it made (as `mkdir({ recursive: true })` does), or undefined when all were there.
 */
export function makeDirs(dir: string, mode: number): string | undefined {
  const missing: string[] = [];
  for (let at = resolve(dir); ; at = dirname(at)) {
    try {
      lstatSync(at);
      break;
    } catch (error) {
      if (!isErrno(error, 'ENOENT')) throw error;
      missing.unshift(at);
      if (dirname(at) === at) break;
    }
  }
  for (const path of missing) {
    try {
      mkdirSync(path, { mode });
    } catch (error) {
      if (!isErrno(error, 'EEXIST')) throw error;
    }
  }
  return missing[0];
}

const CAUSES: Readonly<Record<string, string>> = {
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'the file system does not allow it',
  ENOENT: 'the file system does not allow creating it',
  ENOTDIR: 'a part of the path is a file, not a directory',
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is exhausted',
  ENAMETOOLONG: 'the path is too long',
  ELOOP: 'the path has too many symbolic links',
};

/** Why a state dir could not be made or written, in words, or null for an error that is not the file system's. */
export function stateDirCause(error: unknown): string | null {
  const code = errnoOf(error);
  if (code === undefined || !(code in CAUSES)) return null;
  return `${CAUSES[code]} (${code})`;
}

export const STATE_DIR_HINT = 'give a writable directory with --state-dir DIR or HANDOFF_STATE_DIR (default ~/.local/state/session-handoff)';
