import { readFile, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
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
    // A path in a git dir belongs to its work tree: the edit guard must cover `.git/config` too.
    const owner = await workTreeOfGitDir(real);
    if (owner !== null) return owner;
    throw notARepository(dir, error.result.stderr.trim().split('\n')[0] ?? 'git failed');
  }
  if (top === '') throw notARepository(dir, 'a bare repository has no work tree');
  return realpath(top);
}

const gitIn = (cwd: string, args: string[]) => git(args, { cwd, timeoutMs: 10_000 }).catch(() => null);

/**
 * The work tree whose git dir holds `dir`, or null (not in a git dir, a bare repository): a linked
 * worktree's (its `gitdir` file), one named by `core.worktree` (a separate git dir, a submodule's), or
 * the directory above a `.git`. Each candidate counts only if git finds this very git dir from it.
 */
async function workTreeOfGitDir(dir: string): Promise<string | null> {
  if ((await gitIn(dir, ['rev-parse', '--is-inside-git-dir'])) !== 'true') return null;
  const gitDir = await gitIn(dir, ['rev-parse', '--absolute-git-dir']);
  if (gitDir === null) return null;
  const linked = await readFile(join(gitDir, 'gitdir'), 'utf8').then(
    (text) => dirname(text.trim()),
    () => null,
  );
  const configured = await gitIn(gitDir, ['config', '--get', 'core.worktree']);
  for (const candidate of [linked, configured === null ? null : resolve(gitDir, configured), dirname(gitDir)]) {
    if (candidate === null) continue;
    const real = await realpath(candidate).catch(() => null);
    if (real === null) continue;
    const [top, found] = [await gitIn(real, ['rev-parse', '--show-toplevel']), await gitIn(real, ['rev-parse', '--absolute-git-dir'])];
    if (top !== null && top !== '' && found !== null && (await realpath(found).catch(() => null)) === (await realpath(gitDir))) return realpath(top);
  }
  return null;
}

/** A path inside the git dir (the common dir's for linked worktrees), e.g. `info/exclude`. */
export async function gitPath(root: string, name: string): Promise<string> {
  return git(['rev-parse', '--path-format=absolute', '--git-path', name], { cwd: root, timeoutMs: 10_000 });
}
