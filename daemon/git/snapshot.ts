import { copyFile, mkdtemp, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HandoffError } from '../../protocol/index.js';
import { dataArg } from './data-arg.js';
import { git, GitError, runGit } from './run-git.js';
import { OWN_FILES_EXCLUDE } from './own-files.js';
import { gitPath } from './repo-root.js';
import { daemonCommitEnv } from './daemon-identity.js';
import { keepCommitted, withholdExcludes } from './withhold.js';

/** How many files git may refuse before the snapshot gives up (each one costs another `add`). */
const MAX_REFUSED = 20;
const ADD_TIMEOUT_MS = 300_000;

/** Lines where git names a file it would not add: a failing required filter, an unreadable file. */
const REFUSAL = [/^fatal: (.+): clean filter '[^']*' failed$/gm, /^error: unable to index file '(.+)'$/gm, /^error: open\("(.+)"\): /gm];

function refusedPaths(stderr: string): string[] {
  return REFUSAL.flatMap((pattern) => [...stderr.matchAll(pattern)].map((match) => match[1] ?? '')).filter(Boolean);
}

/**
 * `add -A` into the scratch index. `--sparse` records untracked files outside a sparse cone (plain
 * `add` refuses them and exits 1) while entries outside the cone keep the index's version; a file
 * git refuses is left out (tracked ones keep the index's version) and named, never a failed drain.
 */
async function addAll(root: string, env: Readonly<Record<string, string>>, withhold: readonly string[]): Promise<string[]> {
  const refused: string[] = [];
  for (;;) {
    const args = [
      'add',
      '-A',
      '--sparse',
      '--ignore-errors',
      '--',
      '.',
      OWN_FILES_EXCLUDE,
      ...refused.map((path) => `:(exclude,literal)${path}`),
      ...withholdExcludes(withhold),
    ];
    const result = await runGit(args, { cwd: root, env, timeoutMs: ADD_TIMEOUT_MS });
    if (result.code === 0 && !result.timedOut && result.startError === undefined) return refused;
    const found = result.timedOut || result.startError !== undefined ? [] : refusedPaths(result.stderr).filter((path) => !refused.includes(path));
    if (found.length === 0 || refused.length + found.length > MAX_REFUSED) throw new GitError(args, result, ADD_TIMEOUT_MS);
    refused.push(...found);
  }
}

/** An entry of the scratch index that differs from HEAD (every entry when there is no HEAD). */
export interface StagedEntry {
  readonly path: string;
  readonly mode: string;
  readonly blob: string;
}

/**
 * Looks at what `add` actually staged, before anything is written from it, and names the paths to
 * keep off the snapshot after all (a secret in bytes the scan never saw: the file changed after it).
 */
export type StagedAudit = (entries: readonly StagedEntry[], head: string | null) => Promise<readonly string[]>;

/** The scratch index's entries that differ from HEAD, with their blob ids: one git process. */
async function stagedEntries(root: string, env: Readonly<Record<string, string>>, head: string | null): Promise<StagedEntry[]> {
  const options = { cwd: root, env, timeoutMs: 120_000 };
  const entries: StagedEntry[] = [];
  if (head === null) {
    // `mode blob stage\tpath`
    for (const record of (await git(['ls-files', '-s', '-z'], options)).split('\0')) {
      const tab = record.indexOf('\t');
      const [mode = '', blob = ''] = record.slice(0, tab).split(' ');
      if (tab > 0) entries.push({ path: record.slice(tab + 1), mode, blob });
    }
    return entries;
  }
  // `:oldmode newmode oldblob newblob status\0path\0`; a deletion stages no bytes.
  const fields = (await git(['diff-index', '--cached', '-z', '--no-renames', '--end-of-options', head], options)).split('\0');
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [, mode = '', , blob = '', status = ''] = (fields[i] ?? '').split(' ');
    if (status !== 'D') entries.push({ path: fields[i + 1] ?? '', mode, blob });
  }
  return entries;
}

export interface WorkTreeSnapshot {
  readonly tree: string;
  /** Files git would not add, relative to the root: left out of the tree, reported. */
  readonly refused: readonly string[];
}

/**
 * The tree of the whole work tree (tracked and untracked, ignored excluded), built in a temporary
 * index: the user's index is only read (copied, so git reuses its stat cache), never written.
 */
export async function workTreeSnapshot(
  root: string,
  withhold: readonly string[] = [],
  audit?: { readonly head: string | null; readonly check: StagedAudit },
  knownIndex?: string,
  /** Where the scratch index is kept once the tree is written (a rehearsal's package); otherwise it is removed. */
  keepIndexAt?: string,
): Promise<WorkTreeSnapshot> {
  const scratch = await mkdtemp(join(tmpdir(), 'handoff-index-'));
  try {
    const index = join(scratch, 'index');
    const userIndex = knownIndex ?? (await gitPath(root, 'index'));
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
    const refused = await addAll(root, env, withhold);
    // Files holding a secret (daemon/evacuation/secret-scan.ts) stay as committed, or absent.
    await keepCommitted(root, env, withhold);
    if (audit !== undefined) {
      // What `add` staged is what is pushed, whatever the work tree held when it was scanned.
      const late = await audit.check(await stagedEntries(root, env, audit.head), audit.head);
      await keepCommitted(root, env, late);
    }
    const tree = await git(['write-tree'], { cwd: root, env, timeoutMs: 120_000 });
    if (keepIndexAt !== undefined) {
      // With git's mtime: the entries' stat data is trusted only against an index file newer than them.
      const written = await stat(index);
      await copyFile(index, keepIndexAt);
      await utimes(keepIndexAt, written.atime, written.mtime);
    }
    return { tree, refused };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** `from`: an index to start from instead of the user's (the snapshot's own, whose stat data is fresher: nothing re-hashed). */
export async function treeOfWorkTree(root: string, withhold: readonly string[] = [], from?: string): Promise<string> {
  return (await workTreeSnapshot(root, withhold, undefined, from)).tree;
}

export interface SnapshotRequest {
  readonly ref: string;
  readonly message: string;
  /** Fixed commit dates make the snapshot of an unchanged tree the same commit after a crash. */
  readonly createdAt: string;
  /** The commit the ref must hold now (a previous revision), or null when it must not exist yet. */
  readonly expectedOld: string | null;
  /** Paths kept off the snapshot (a secret was found in them): committed content, or left out. */
  readonly withhold?: readonly string[];
  /** Checks the staged entries before the tree is written (daemon/evacuation/staged-audit.ts). */
  readonly audit?: StagedAudit;
  /** HEAD and the user's index as the caller read them (for the secret scan); looked up when absent. */
  readonly repository?: HeadAndIndex;
  /** Where the scratch index that built the tree is kept (the offer's re-check starts from it); otherwise removed. */
  readonly keepIndexAt?: string;
}

export interface SnapshotResult {
  readonly ref: string;
  readonly commit: string;
  readonly tree: string;
  readonly parent: string | null;
  readonly refused: readonly string[];
}

export interface HeadAndIndex {
  /** HEAD's commit; null when HEAD is unborn. */
  readonly head: string | null;
  /** The user's index file, absolute (the linked worktree's own for a linked worktree). */
  readonly index: string;
}

const OBJECT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/** HEAD's commit and the path of the user's index from one git process (each costs the daemon a fork). */
export async function headAndIndex(root: string): Promise<HeadAndIndex> {
  // rev-parse answers in order: the index path always, then HEAD's commit, which `-q --verify` leaves
  // out (exit 1) when HEAD is unborn; any other exit is a failure.
  const args = ['rev-parse', '--path-format=absolute', '--git-path', 'index', '-q', '--verify', '--end-of-options', 'HEAD^{commit}'];
  const result = await runGit(args, { cwd: root, timeoutMs: 10_000 });
  const out = result.stdout.replace(/\n$/, '');
  if (result.code === 1 && !result.timedOut && out !== '' && !out.includes('\n')) return { head: null, index: out };
  const cut = out.lastIndexOf('\n');
  const head = out.slice(cut + 1);
  if (result.code !== 0 || result.timedOut || cut <= 0 || !OBJECT_ID.test(head)) throw new GitError(args, result, 10_000);
  return { head, index: out.slice(0, cut) };
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
  const { head, index } = request.repository ?? (await headAndIndex(root));
  const { tree, refused } = await workTreeSnapshot(
    root,
    request.withhold ?? [],
    request.audit === undefined ? undefined : { head, check: request.audit },
    index,
    request.keepIndexAt,
  );
  const parent = request.expectedOld ?? head;
  const date = request.createdAt;
  const env = daemonCommitEnv(date);
  // Signing could ask for a passphrase; a snapshot is the daemon's, not the user's.
  const commit = await git(['commit-tree', '--no-gpg-sign', ...(parent ? ['-p', parent] : []), '-m', request.message, '--end-of-options', tree], {
    cwd: root,
    env,
  });
  // update-ref checks the expected old value itself (an empty one: the ref must not exist), so the
  // ref is read only when it refuses: a resumed drain finds its own commit there, anything else is not ours.
  const args = ['update-ref', '-m', request.message, '--end-of-options', request.ref, commit, request.expectedOld ?? ''];
  const update = await runGit(args, { cwd: root });
  if (update.code === 0 && !update.timedOut && update.startError === undefined) return { ref: request.ref, commit, tree, parent, refused };
  const existing = await currentRef(root, request.ref);
  if (existing === commit) return { ref: request.ref, commit, tree, parent, refused };
  if (existing !== request.expectedOld) {
    throw new HandoffError(
      'corrupt_record',
      `${request.ref} already points at ${existing ?? 'nothing'}, not at ${request.expectedOld ?? 'nothing'} as the journal says`,
      `inspect it with \`git log ${request.ref}\`; the daemon never moves a ref it did not expect`,
    );
  }
  throw new GitError(args, update);
}
