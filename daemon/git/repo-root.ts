import { realpath, stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { HandoffError } from '../../protocol/index.js';
import { git, GitError } from './run-git.js';

function notARepository(dir: string, why: string): HandoffError {
  return new HandoffError('not_a_repository', `${dir} is not inside a git repository (${why})`, 'run the command inside a git work tree, or pass --repo DIR');
}

/** The workspace key: the realpath of `git rev-parse --show-toplevel` for a directory inside it. */
export async function resolveRepoRoot(dir: string): Promise<string> {
  if (!isAbsolute(dir)) throw notARepository(dir, 'the path must be absolute');
  let real: string;
  try {
    real = await realpath(dir);
    if (!(await stat(real)).isDirectory()) throw new HandoffError('not_a_repository', `not a directory: ${dir}`, 'pass --repo DIR of a git work tree');
  } catch (error) {
    if (error instanceof HandoffError) throw error;
    // The words a person knows from their shell, not an errno name.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new HandoffError('not_a_repository', `no such directory: ${dir}`, 'check the path, or pass --repo DIR of a git work tree');
    if (code === 'ENOTDIR') throw notARepository(dir, 'a part of the path is a file');
    throw notARepository(dir, code ?? 'unreadable');
  }
  let top: string;
  try {
    top = await git(['rev-parse', '--show-toplevel'], { cwd: real, timeoutMs: 10_000 });
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
    throw notARepository(dir, error.result.stderr.trim().split('\n')[0] ?? 'git failed');
  }
  if (top === '') throw notARepository(dir, 'a bare repository has no work tree');
  return realpath(top);
}

/** A path inside the git dir (the common dir's for linked worktrees), e.g. `info/exclude`. */
export async function gitPath(root: string, name: string): Promise<string> {
  return git(['rev-parse', '--path-format=absolute', '--git-path', name], { cwd: root, timeoutMs: 10_000 });
}
