import { existsSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { HandoffError, checkpointRef, displayRemote, type ReceiverObservation } from '../../protocol/index.js';
import type { Manifest } from '../../schemas/index.js';
import { dataArg, git, instructionFiles, runGit, smudgePins, treeOfWorkTree } from '../git/index.js';

async function optional(args: readonly string[], cwd: string, timeoutMs = 15_000): Promise<string | null> {
  const result = await runGit(args, { cwd, timeoutMs });
  return result.code === 0 ? result.stdout.trim() : null;
}

async function hasCommit(root: string, commit: string): Promise<boolean> {
  return (await runGit(['cat-file', '-e', '--end-of-options', `${dataArg(commit, 'checkpoint commit', 'corrupt_record')}^{commit}`], { cwd: root })).code === 0;
}

async function remoteUrls(root: string): Promise<Map<string, string>> {
  const urls = new Map<string, string>();
  for (const name of (await optional(['remote'], root))?.split('\n').filter(Boolean) ?? []) {
    const url = await optional(['config', '--get', `remote.${name}.url`], root);
    if (url !== null) urls.set(name, url);
  }
  return urls;
}

/**
 * Makes the checkpoint commit available in the receiver's object store: already there, or fetched
 * from where the receiver says — the remote it named (`--from`), the source checkout on this machine
 * or its own remotes — with the ref the daemon derives from the cycle. Never from a remote, URL or
 * ref a manifest names: a manifest is data, and on another machine anyone who can push wrote it.
 * Only objects arrive (no FETCH_HEAD, no ref of the receiver moves).
 */
async function ensureCommit(
  root: string,
  commit: string | null,
  from: ObserveOptions['fetchFrom'],
  timeoutMs: number,
): Promise<ReceiverObservation['commit_source']> {
  if (commit === null) return 'missing';
  if (await hasCommit(root, commit)) return 'present';
  for (const source of from.sources) {
    const fetched = await runGit(
      // `--refmap=`: a named remote's fetch refspec would otherwise also write its remote-tracking ref (git's opportunistic update).
      ['fetch', '--no-tags', '--no-write-fetch-head', '--refmap=', '--end-of-options', dataArg(source, 'remote'), dataArg(from.ref, 'checkpoint ref')],
      { cwd: root, timeoutMs },
    );
    if (fetched.code === 0 && (await hasCommit(root, commit))) return 'fetched';
  }
  return 'missing';
}

export async function isClean(root: string): Promise<boolean> {
  return (await git(['status', '--porcelain', '--untracked-files=all'], { cwd: root, timeoutMs: 120_000 })) === '';
}

async function differences(root: string, tree: string, target: string | null): Promise<string[]> {
  if (target === null) return [];
  const diff = await optional(
    ['diff', '--name-status', '--no-renames', '--end-of-options', tree, dataArg(target, 'checkpoint tree', 'corrupt_record')],
    root,
    60_000,
  );
  return (diff ?? '').split('\n').filter(Boolean).slice(0, 100);
}

export interface ObserveOptions {
  readonly manifest: Manifest;
  /** The tree the primary froze at (the out leg's checkpoint), for the return leg. */
  readonly frozenTree: string | null;
  /** Paths the out snapshot withheld (a secret): the primary's tree is read without them on the return leg. */
  readonly frozenWithhold?: readonly string[];
  readonly timeoutMs: number;
  /** Where the checkpoint may be fetched from (remote names or the source's path) and its ref, both chosen by the daemon. */
  readonly fetchFrom: { readonly sources: readonly string[]; readonly ref: string };
  /** Whether the accept may move this tree (decided by the caller; nothing moves here). */
  readonly move: (tree: string, clean: boolean) => Promise<ReceiverObservation['checkout']>;
  /** The cycle whose local `handoff/<cycle>` branch an out leg's move checks out. */
  readonly cycle: string;
}

/** The root commit named for identity; among a remote's several histories, the recorded one when it is there. */
function rootCommitOf(listed: string | null, recorded: string | null): string | null {
  const roots = (listed ?? '').split('\n').filter(Boolean).sort();
  return recorded !== null && roots.includes(recorded) ? recorded : (roots[0] ?? null);
}

/** What the receiver's checkout really is; the only write is fetching the checkpoint's objects. */
export async function observeReceiver(root: string, options: ObserveOptions): Promise<ReceiverObservation> {
  const { manifest } = options;
  const head = await optional(['rev-parse', '-q', '--verify', 'HEAD^{commit}'], root);
  // An unborn HEAD (a fresh clone whose remote names no default branch) has no history of its own:
  // the repository is judged by its remote's, the root commits of its remote-tracking refs.
  const roots = await optional(['rev-list', '--max-parents=0', head === null ? '--remotes' : 'HEAD'], root);
  const commitSource = await ensureCommit(root, manifest.checkpoint.commit, options.fetchFrom, options.timeoutMs);
  const tree = await treeOfWorkTree(root, options.frozenTree === null ? [] : (options.frozenWithhold ?? []));
  // Only a tree that differs from a checkpoint we have can be moved to it.
  let checkout: ReceiverObservation['checkout'] = 'not_needed';
  if (tree !== manifest.checkpoint.tree) checkout = commitSource === 'missing' ? 'not_requested' : await options.move(tree, await isClean(root));
  // A move git would refuse is found now, before the lease moves: a granted lease for a tree that never came is the failure to avoid.
  const blocker =
    checkout === 'would_move'
      ? await checkoutBlocker(root, options.frozenTree === null ? { commit: manifest.checkpoint.commit, cycle: options.cycle } : null)
      : null;
  if (blocker !== null) checkout = 'refused_git';
  return {
    checkout_blocker: blocker,
    root_commit: rootCommitOf(roots, head === null ? manifest.repository.root_commit : null),
    remote_urls: [...(await remoteUrls(root)).values()].map(displayRemote),
    commit_present: commitSource !== 'missing',
    commit_source: commitSource,
    head: await optional(['rev-parse', '-q', '--verify', 'HEAD^{commit}'], root),
    tree,
    differences: tree === manifest.checkpoint.tree ? [] : await differences(root, tree, manifest.checkpoint.tree),
    checkout,
    instructions: await instructionFiles(root),
  };
}

/** How long a held index lock may take to go away before the move is refused, and how often it is looked at. */
const LOCK_PATIENCE_MS = 2000;
const LOCK_POLL_MS = 100;

/**
 * Why git would refuse to move the work tree now, or null. Every move rewrites the index, so a held
 * index lock refuses it; the out leg's switch is also tried as a dry run (`read-tree -n`: nothing is
 * written), which names a file in the way or an unreadable object. The return leg's move is checked
 * against the frozen tree by `bringToReturned` itself before it writes.
 */
async function checkoutBlocker(root: string, out: { readonly commit: string | null; readonly cycle: string } | null): Promise<string | null> {
  const lock = await optional(['rev-parse', '--path-format=absolute', '--git-path', 'index.lock'], root);
  // Another git command (an editor's `git status`) holds the lock for moments; a crashed one holds it for good.
  for (let waited = 0; lock !== null && existsSync(lock) && waited < LOCK_PATIENCE_MS; waited += LOCK_POLL_MS) await sleep(LOCK_POLL_MS);
  if (lock !== null && existsSync(lock)) return `${lock} exists: another git process is running, or one crashed (remove the file once none runs)`;
  if (out === null || out.commit === null) return null;
  const commit = out.commit;
  const branch = await optional(['rev-parse', '-q', '--verify', `${checkpointRef(out.cycle, 'out')}^{commit}`], root);
  // The branch is the daemon's name, but a branch is never moved by force: one elsewhere is left to the person.
  if (branch !== null && branch !== commit)
    return `the local branch handoff/${out.cycle} is at ${branch.slice(0, 12)}, not at the checkpoint (it is never moved by force)`;
  const head = await optional(['rev-parse', '-q', '--verify', 'HEAD^{commit}'], root);
  const from = head === null ? [] : [head];
  // A stale stat cache would make git call a clean file "not uptodate"; the refresh only rewrites that cache.
  await runGit(['update-index', '-q', '--refresh'], { cwd: root, timeoutMs: 120_000 });
  const dry = await runGit(['read-tree', '-n', '-m', '-u', '--end-of-options', ...from, dataArg(commit, 'checkpoint commit', 'corrupt_record')], {
    cwd: root,
    timeoutMs: 120_000,
  });
  if (dry.code === 0) return null;
  return (dry.stderr.trim().split('\n')[0] ?? '').slice(0, 300) || `git read-tree exited ${dry.code ?? 'on a signal'}`;
}

/** The command that puts a clean checkout on the checkpoint's local branch, as a person would type it. */
export const switchWords = (cycle: string, commit: string): string => `git switch -c handoff/${cycle} ${commit}`;

/**
 * Out leg: a clean work tree is switched to the checkpoint on the local branch `handoff/<cycle>` (made
 * there, or already there at that commit: never the user's branches, never a detached HEAD); git refuses
 * anything else. The switch may smudge LFS files: their endpoint is pinned to `remote`'s (lfs.ts), whatever
 * the checkpoint's `.lfsconfig` says.
 */
export async function switchToCheckpoint(root: string, cycle: string, commit: string, remote: string | null): Promise<void> {
  const target = dataArg(commit, 'checkpoint commit', 'corrupt_record');
  const branch = checkpointRef(cycle, 'out').replace(/^refs\/heads\//, '');
  const exists = (await optional(['rev-parse', '-q', '--verify', `${checkpointRef(cycle, 'out')}^{commit}`], root)) !== null;
  const how = exists ? ['switch', '--no-guess', branch] : ['switch', '--no-guess', '-c', branch, '--end-of-options', target];
  await git([...(await smudgePins(root, remote)), ...how], { cwd: root, timeoutMs: 120_000 });
}

/**
 * After a `git switch` that failed part way (a smudge filter, a disk that filled): HEAD and the index
 * are where they were, but files of the checkpoint may be written. The tree was clean before the move
 * (checked), so a path that now differs from the index and holds exactly the checkpoint's bytes was
 * written by the switch: a tracked one is restored from the index, a new one removed; a tracked file the
 * switch deleted is restored. Anything else is left as it is and named: nothing of the user's is guessed at.
 */
export async function undoPartialSwitch(root: string, commit: string, remote: string | null): Promise<string[]> {
  const status = await git(['status', '--porcelain', '-z', '--untracked-files=all', '--no-renames'], { cwd: root, timeoutMs: 120_000 });
  const target = dataArg(commit, 'checkpoint commit', 'corrupt_record');
  const restore: string[] = [];
  const left: string[] = [];
  for (const entry of status.split('\0').filter(Boolean)) {
    const how = entry.slice(0, 2);
    const path = entry.slice(3);
    const wanted = await optional(['rev-parse', '-q', '--verify', '--end-of-options', `${target}:${path}`], root);
    const written = () => optional(['hash-object', '--no-filters', '--', path], root);
    if (how === '??' && wanted !== null && (await written()) === wanted) await unlink(join(root, path));
    else if (how === ' M' && wanted !== null && (await written()) === wanted) restore.push(path);
    else if (how === ' D' && wanted === null) restore.push(path);
    else left.push(path);
  }
  if (restore.length > 0) await git([...(await smudgePins(root, remote)), 'checkout-index', '-f', '-q', '--', ...restore], { cwd: root, timeoutMs: 120_000 });
  return left;
}

/**
 * Return leg: the primary's work tree, verified equal to the out checkpoint (so every
 * byte is also in that commit), is brought to the returned tree. HEAD and the branch stay; the
 * returned work appears as uncommitted changes on top of them, ready for review. Run backwards (returned
 * → frozen) it puts the frozen state back when the cycle could not close after the move.
 */
export async function bringToReturned(
  root: string,
  frozenTree: string,
  returnedTree: string,
  options: { readonly withhold?: readonly string[]; readonly remote: string | null },
): Promise<void> {
  const withhold = options.withhold ?? [];
  if ((await treeOfWorkTree(root, withhold)) !== frozenTree) {
    throw new HandoffError('diverged', 'the work tree changed while it was being checked', 'nothing was moved; verify again');
  }
  await git(['read-tree', '--end-of-options', dataArg(frozenTree, 'frozen tree', 'corrupt_record')], { cwd: root });
  await runGit(['update-index', '-q', '--refresh'], { cwd: root, timeoutMs: 120_000 });
  await git(
    [
      ...(await smudgePins(root, options.remote)),
      'read-tree',
      '-m',
      '-u',
      '--end-of-options',
      frozenTree,
      dataArg(returnedTree, 'returned tree', 'corrupt_record'),
    ],
    {
      cwd: root,
      timeoutMs: 120_000,
    },
  );
  await git(['reset', '-q', '--mixed', 'HEAD'], { cwd: root, timeoutMs: 120_000 });
}
