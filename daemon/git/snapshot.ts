import { copyFile, mkdtemp, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HandoffError } from '../../protocol/index.js';
import { dataArg } from './data-arg.js';
import { git, runGit } from './run-git.js';
import { gitPath } from './repo-root.js';

const IDENTITY = { name: 'session-handoff', email: 'session-handoff@localhost' };

/**
 * The tree of the whole work tree (tracked and untracked, ignored excluded), built in a temporary
 * index: the user's index is only read (copied, so git reuses its stat cache), never written.
 */
export async function workTreeTree(root: string): Promise<string> {
  const scratch = await mkdtemp(join(tmpdir(), 'handoff-index-'));
  try {
    const index = join(scratch, 'index');
    const userIndex = await gitPath(root, 'index');
    const stats = await stat(userIndex).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (stats !== null) {
      await copyFile(userIndex, index);
      // The copy keeps the original's mtime: git trusts an entry's stat data only when it is older
      // than the index file, so a fresh mtime would hide edits made in the same second (racy git).
      await utimes(index, stats.atime, stats.mtime);
    }
    const env = { GIT_INDEX_FILE: index };
    await git(['add', '-A', '--', '.'], { cwd: root, env, timeoutMs: 300_000 });
    return await git(['write-tree'], { cwd: root, env, timeoutMs: 120_000 });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

export interface SnapshotRequest {
  readonly ref: string;
  readonly message: string;
  /** Fixed commit dates make the snapshot of an unchanged tree the same commit after a crash. */
  readonly createdAt: string;
  /** The commit the ref must hold now (a previous revision), or null when it must not exist yet. */
  readonly expectedOld: string | null;
}

export interface SnapshotResult {
  readonly ref: string;
  readonly commit: string;
  readonly tree: string;
  readonly parent: string | null;
}

export async function currentRef(root: string, ref: string): Promise<string | null> {
  const result = await runGit(['rev-parse', '-q', '--verify', '--end-of-options', `${dataArg(ref, 'ref')}^{commit}`], { cwd: root });
  return result.code === 0 ? result.stdout.trim() : null;
}

/**
 * A commit of the work tree with HEAD (or the previous revision) as parent, on `ref`, written with
 * `update-ref` against the expected old value. HEAD, the index, branches and files stay untouched.
 */
export async function snapshotWorkTree(root: string, request: SnapshotRequest): Promise<SnapshotResult> {
  const tree = await workTreeTree(root);
  const head = await currentRef(root, 'HEAD');
  const parent = request.expectedOld ?? head;
  const date = request.createdAt;
  const env = {
    GIT_AUTHOR_NAME: IDENTITY.name,
    GIT_AUTHOR_EMAIL: IDENTITY.email,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: IDENTITY.name,
    GIT_COMMITTER_EMAIL: IDENTITY.email,
    GIT_COMMITTER_DATE: date,
  };
  // Signing could ask for a passphrase; a snapshot is the daemon's, not the user's.
  const commit = await git(['commit-tree', '--no-gpg-sign', ...(parent ? ['-p', parent] : []), '-m', request.message, '--end-of-options', tree], { cwd: root, env });
  const existing = await currentRef(root, request.ref);
  if (existing === commit) return { ref: request.ref, commit, tree, parent };
  if (existing !== request.expectedOld) {
    throw new HandoffError(
      'corrupt_record',
      `${request.ref} already points at ${existing ?? 'nothing'}, not at ${request.expectedOld ?? 'nothing'} as the journal says`,
      `inspect it with \`git log ${request.ref}\`; the daemon never moves a ref it did not expect`,
    );
  }
  await git(['update-ref', '-m', request.message, '--end-of-options', request.ref, commit, request.expectedOld ?? ''], { cwd: root });
  return { ref: request.ref, commit, tree, parent };
}
