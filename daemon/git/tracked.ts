import { createHash } from 'node:crypto';
import { git, runGit } from './run-git.js';

/** git's object ids of a blob of these bytes, SHA-1 and SHA-256 (whichever the repository uses). */
export function blobIds(bytes: Uint8Array): string[] {
  const header = `blob ${bytes.length}\0`;
  return ['sha1', 'sha256'].map((algorithm) => createHash(algorithm).update(header).update(bytes).digest('hex'));
}

const options = (root: string) => ({ cwd: root, timeoutMs: 120_000 });

/**
 * Whether the remote could have supplied `path` (relative to the root): it is in the index, or in any
 * commit of any ref (a pull brings it; `git rm --cached` afterwards does not make it the user's).
 */
export async function cameThroughGit(root: string, path: string): Promise<boolean> {
  const pathspec = `:(top,literal)${path}`;
  if ((await git(['ls-files', '-z', '--cached', '--', pathspec], options(root))) !== '') return true;
  return (await git(['rev-list', '-1', '--all', '--', pathspec], options(root))) !== '';
}

/**
 * Whether these bytes at `path` are exactly what the index or HEAD holds there: text a commit brought
 * (a clone, a pull, a checkout), not text written in this checkout since.
 */
export async function asCommitted(root: string, path: string, bytes: Uint8Array): Promise<boolean> {
  const ids = new Set(blobIds(bytes));
  // `mode blob stage\tpath`
  const staged = await git(['ls-files', '-z', '--stage', '--', `:(top,literal)${path}`], options(root));
  if (staged.split('\0').some((entry) => ids.has(entry.split(' ')[1] ?? ''))) return true;
  // `mode type blob\tpath`; an unborn HEAD lists nothing.
  const head = await runGit(['ls-tree', '-z', '--full-tree', '--end-of-options', 'HEAD', '--', path], options(root));
  return head.code === 0 && head.stdout.split('\0').some((entry) => ids.has(entry.split('\t')[0]?.split(' ')[2] ?? ''));
}
