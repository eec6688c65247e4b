import { HandoffError, isCycleId, redactCredentials } from '../../protocol/index.js';
import { dataArg } from './data-arg.js';
import { lookAlikeNames, lookAlikePush } from './look-alike.js';
import { runGit, type GitResult } from './run-git.js';

/** One handoff ref and the commit it holds; `cycle` is the valid cycle id its name ends in. */
export interface HandoffRef {
  readonly ref: string;
  readonly commit: string;
  readonly cycle: string;
}

const BRANCH = /^refs\/heads\/handoff\/(.+?)(-return)?$/;
const RECORD = /^refs\/handoff\/[a-z]+\/(.+)$/;

/** The cycle a handoff ref belongs to, or null for any other name (left alone: not ours to prune). */
export function cycleOfRef(ref: string): string | null {
  const match = BRANCH.exec(ref) ?? RECORD.exec(ref);
  const cycle = match?.[1];
  return cycle !== undefined && isCycleId(cycle) ? cycle : null;
}

function parseRefLines(text: string, separator: ' ' | '\t'): HandoffRef[] {
  const refs: HandoffRef[] = [];
  for (const line of text.split('\n')) {
    const [commit, ref] = line.split(separator);
    if (commit === undefined || ref === undefined) continue;
    const cycle = cycleOfRef(ref);
    if (cycle !== null) refs.push({ ref, commit, cycle });
  }
  return refs;
}

function failure(result: GitResult): string {
  if (result.startError !== undefined) return redactCredentials(result.startError);
  if (result.timedOut) return 'git timed out';
  return redactCredentials(result.stderr.trim().split('\n').slice(-2).join(' / ')).slice(0, 400);
}

// Prune deletes on the remote before it deletes here: a remote failure leaves this repository's refs
// in place, so the next prune still knows which cycles to name there.
const unreachable = (message: string) => new HandoffError('remote_unreachable', message, 'nothing was deleted; fix the remote, then run `handoff prune` again');

/** Every local handoff branch and records ref with a valid cycle id. */
export async function localHandoffRefs(root: string): Promise<HandoffRef[]> {
  const listed = await runGit(['for-each-ref', '--format=%(objectname) %(refname)', '--end-of-options', 'refs/heads/handoff/', 'refs/handoff/'], { cwd: root });
  if (listed.code !== 0) throw new Error(`cannot list handoff refs: ${failure(listed)}`);
  return parseRefLines(listed.stdout, ' ');
}

/** Branches checked out in any worktree of the repository: never deleted under a person's feet. */
export async function checkedOutBranches(root: string): Promise<Set<string>> {
  const listed = await runGit(['worktree', 'list', '--porcelain'], { cwd: root });
  if (listed.code !== 0) throw new Error(`cannot list worktrees: ${failure(listed)}`);
  const branches = new Set<string>();
  for (const line of listed.stdout.split('\n')) if (line.startsWith('branch ')) branches.add(line.slice('branch '.length));
  return branches;
}

export interface LocalDeletion {
  readonly deleted: readonly HandoffRef[];
  /** Refs git refused to delete (moved since they were read), with git's words. */
  readonly failed: readonly { readonly ref: HandoffRef; readonly why: string }[];
}

/** Deletes each ref only if it still holds the commit it was read with. */
export async function deleteLocalRefs(root: string, refs: readonly HandoffRef[]): Promise<LocalDeletion> {
  const deleted: HandoffRef[] = [];
  const failed: { ref: HandoffRef; why: string }[] = [];
  for (const ref of refs) {
    const result = await runGit(['update-ref', '-d', '--end-of-options', dataArg(ref.ref, 'handoff ref'), dataArg(ref.commit, 'commit')], { cwd: root });
    if (result.code === 0) deleted.push(ref);
    else failed.push({ ref, why: failure(result) });
  }
  return { deleted, failed };
}

/** The push URL of a remote: pushing to it, not the name, leaves no remote-tracking refs behind. */
async function pushUrl(root: string, remote: string, timeoutMs: number): Promise<string> {
  const url = await runGit(['remote', 'get-url', '--push', '--end-of-options', dataArg(remote, 'remote name')], { cwd: root, timeoutMs });
  if (url.code !== 0)
    throw new HandoffError(
      'usage_error',
      `no remote '${redactCredentials(remote)}' in this repository: ${failure(url)}`,
      'nothing was deleted; `git remote -v` lists the remotes',
    );
  return dataArg(url.stdout.trim(), 'remote URL');
}

/** A ref on the remote, with the other names there that git's push would also take for it. */
export interface RemoteHandoffRef extends HandoffRef {
  readonly lookAlikes: readonly string[];
}

/** The handoff refs the remote holds now (one `ls-remote`, whose patterns match a name's tail: look-alikes are listed too). */
export async function remoteHandoffRefs(root: string, remote: string, timeoutMs: number): Promise<RemoteHandoffRef[]> {
  const url = await pushUrl(root, remote, timeoutMs);
  const listed = await runGit(['ls-remote', '--refs', '--end-of-options', url, 'refs/heads/handoff/*', 'refs/handoff/*'], { cwd: root, timeoutMs });
  if (listed.code !== 0 || listed.timedOut) throw unreachable(`cannot read '${redactCredentials(url)}': ${failure(listed)}`);
  const names = new Set(listed.stdout.split('\n').map((line) => line.split('\t')[1]));
  return parseRefLines(listed.stdout, '\t').map((ref) => ({ ...ref, lookAlikes: lookAlikeNames(ref.ref).filter((name) => names.has(name)) }));
}

/**
 * Deletes refs the remote was just seen to hold, in one `push --atomic` (all or none, never forced,
 * no hooks of this repository), through the push URL. The caller leaves out a ref with a look-alike.
 */
export async function deleteRemoteRefs(root: string, remote: string, refs: readonly HandoffRef[], timeoutMs: number): Promise<void> {
  if (refs.length === 0) return;
  const url = await pushUrl(root, remote, timeoutMs);
  const push = await runGit(
    ['push', '--atomic', '--porcelain', '--no-verify', '--end-of-options', url, ...refs.map(({ ref }) => `:${dataArg(ref, 'handoff ref')}`)],
    {
      cwd: root,
      timeoutMs,
    },
  );
  // A look-alike that appeared since the listing: git refuses the name, or deletes the look-alike.
  const alike = await lookAlikePush(
    root,
    url,
    push,
    refs.map(({ ref }) => ref),
    timeoutMs,
  );
  if (alike !== null) throw new HandoffError('remote_refused', alike, 'then run `handoff prune` again; it names what is left');
  if (push.code === 0 && !push.timedOut && push.startError === undefined) return;
  // git answered: a refusal (a hook, a protected ref) is not a network failure.
  if (push.stdout.split('\n').some((line) => line.startsWith('!')))
    throw new HandoffError(
      'remote_refused',
      `the remote refused the deletion: ${failure(push)}`,
      "nothing was deleted; the remote's owner decides; then run `handoff prune` again",
    );
  throw unreachable(`the remote did not take the deletion: ${failure(push)}`);
}
