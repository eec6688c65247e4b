import { createHash } from 'node:crypto';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { runGit } from '../git/index.js';

/**
 * A cheap mark of the work tree's state: HEAD, what `git status` lists, and the size and mtime of each
 * listed file (an edit to a file already modified changes no status line). Only compared with itself:
 * a new rehearsal is worth its cost only when the tree moved since the last one.
 */
export async function treeFingerprint(root: string, timeoutMs: number): Promise<string> {
  // GIT_OPTIONAL_LOCKS=0 (the git layer) keeps status from refreshing the user's index.
  const status = await runGit(['status', '--porcelain=v2', '-z', '--untracked-files=all', '--branch'], { cwd: root, timeoutMs });
  const hash = createHash('sha256').update(status.stdout);
  for (const record of status.stdout.split('\0')) {
    const path = record.startsWith('? ') ? record.slice(2) : record.startsWith('1 ') ? record.split(' ').slice(8).join(' ') : null;
    if (path === null || path === '') continue;
    const stat = await lstat(join(root, path)).catch(() => null);
    hash.update(`\0${path}\0${stat?.size ?? -1}\0${stat?.mtimeMs ?? -1}`);
  }
  return hash.digest('hex');
}
