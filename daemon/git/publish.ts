import { displayRemote, HandoffError, redactCredentials } from '../../protocol/index.js';
import { dataArg } from './data-arg.js';
import { lookAlikePush } from './look-alike.js';
import { publishLfs } from './lfs.js';
import { runGit, type GitResult } from './run-git.js';

/** One ref the drain publishes, and the commit it must hold on the remote. */
export interface RefUpdate {
  readonly ref: string;
  readonly commit: string;
}

/** Where the push goes, with the checkpoint's LFS content already there. */
export interface PublishRoute {
  /** The remote's push URL (pushurl and pushInsteadOf applied). */
  readonly url: string;
  /** Git LFS objects the checkpoint points at, uploaded and proven on the remote before the ref. */
  readonly lfsObjects: number;
}

export interface PublishRequest {
  readonly route: PublishRoute;
  /** The checkpoint: the first ref of the push. */
  readonly checkpoint: RefUpdate;
  /** The records that travel with it (the package, the lease offer): the same push, all or nothing. */
  readonly records: readonly RefUpdate[];
  readonly timeoutMs: number;
}

export interface PublishResult {
  /** false when the remote already held every ref (a resumed drain): nothing was pushed twice. */
  readonly pushed: boolean;
  readonly verified: true;
  /** Git LFS objects the checkpoint points at, uploaded and proven on the remote before the ref. */
  readonly lfsObjects: number;
}

/** Why a push (or a dry run of one) failed, as the remote or git said it. */
export type PushFailure = 'not_run' | 'timed_out' | 'credentials' | 'rejected' | 'failed' | 'unreachable';

/** The one reading of a failed push's words, shared by the drain's publish and PREPARE's rehearsal. */
export function pushFailure(result: GitResult): PushFailure {
  // `push --porcelain` reports each ref's fate on stdout; the remote's own words come on stderr.
  const text = `${result.stdout}\n${result.stderr}`;
  if (result.startError !== undefined) return 'not_run';
  if (result.timedOut) return 'timed_out';
  if (/terminal prompts disabled|could not read (Username|Password)|Authentication failed|Permission denied \(publickey|askpass/i.test(text))
    return 'credentials';
  if (/\[remote rejected\]|\[rejected\]|pre-receive hook declined|! \[/i.test(text)) return 'rejected';
  if (/pre-push/i.test(text) || result.code === 1) return 'failed';
  return 'unreachable';
}

/** The last words of a push's output, credentials stripped: what a cause quotes. */
export const pushWords = (result: GitResult): string => lastLines(redactCredentials(`${result.stdout}\n${result.stderr}`));

function why(result: GitResult, timeoutMs: number): string {
  switch (pushFailure(result)) {
    case 'not_run':
      return redactCredentials(result.startError ?? '');
    case 'timed_out':
      return `timed out after ${Math.round(timeoutMs / 1000)} s (a hook or the network hung)`;
    case 'credentials':
      return 'the remote asks for credentials and the daemon never prompts';
    case 'rejected':
      return `the remote rejected the push: ${pushWords(result)}`;
    case 'failed':
      return `the push failed: ${pushWords(result)}`;
    case 'unreachable':
      return `the remote is unreachable: ${pushWords(result)}`;
  }
}

const lastLines = (text: string) => text.trim().split('\n').slice(-2).join(' / ').slice(0, 400);

/** One read-back of every ref: name → sha on the remote (absent: not listed). */
async function remoteShas(root: string, remote: string, refs: readonly string[], timeoutMs: number): Promise<{ shas: Map<string, string>; result: GitResult }> {
  const result = await runGit(['ls-remote', '--refs', '--end-of-options', remote, ...refs], { cwd: root, timeoutMs });
  const shas = new Map<string, string>();
  if (result.code === 0) {
    for (const line of result.stdout.split('\n')) {
      const [sha, ref] = line.split('\t');
      if (sha !== undefined && ref !== undefined && refs.includes(ref)) shas.set(ref, sha);
    }
  }
  return { shas, result };
}

function blocked(step: string, result: GitResult, timeoutMs: number, remote: string): HandoffError {
  return new HandoffError(
    'drain_blocked',
    `publish to '${displayRemote(remote)}' ${step}: ${why(result, timeoutMs)}`,
    'nothing of yours was changed; fix the remote or its hook, then run `handoff resume`',
  );
}

/**
 * Before the refs go: the remote's push URL, and the checkpoint's LFS content uploaded (once the ref is
 * there, a receiver may fetch it and needs every object). It needs nothing of the records, so the
 * drain makes them meanwhile.
 */
export async function publishRoute(root: string, remoteName: string, checkpoint: string, timeoutMs: number): Promise<PublishRoute> {
  // Pushing to the URL, not the remote name, keeps git from creating a remote-tracking ref for the
  // handoff branch in the user's repository; `--push` honours pushurl and pushInsteadOf.
  const url = await runGit(['remote', 'get-url', '--push', '--end-of-options', dataArg(remoteName, 'remote name')], { cwd: root, timeoutMs });
  if (url.code !== 0) throw blocked('failed', url, timeoutMs, remoteName);
  const remote = dataArg(url.stdout.trim(), 'remote URL');
  const lfs = await publishLfs(root, checkpoint, remote, timeoutMs);
  return { url: remote, lfsObjects: lfs.objects };
}

/**
 * One network round trip to publish and one to prove it: the checkpoint branch and its records go in
 * a single `push --atomic` (the remote takes all of them or none; never forced, only these refs), then
 * one `ls-remote` reads every ref back. A resumed drain pushes the same commits again, which the remote
 * answers as up to date: nothing is pushed twice. LFS content went first (publishRoute), through the same layer.
 */
export async function publishRefs(root: string, request: PublishRequest): Promise<PublishResult> {
  const { timeoutMs } = request;
  const updates = [request.checkpoint, ...request.records].map((update) => ({
    ref: dataArg(update.ref, 'ref to publish'),
    commit: dataArg(update.commit, 'commit to publish'),
  }));
  const remote = dataArg(request.route.url, 'remote URL');
  const push = await runGit(
    ['push', '--atomic', '--porcelain', '--no-verify', '--end-of-options', remote, ...updates.map(({ commit, ref }) => `${commit}:${ref}`)],
    {
      cwd: root,
      timeoutMs,
    },
  );
  const alike = await lookAlikePush(
    root,
    remote,
    push,
    updates.map(({ ref }) => ref),
    timeoutMs,
  );
  if (alike !== null)
    throw new HandoffError(
      'drain_blocked',
      `publish to '${displayRemote(remote)}' failed: ${alike}`,
      'nothing of yours was changed; then run `handoff resume`',
    );
  if (push.code !== 0 || push.timedOut || push.startError !== undefined) throw blocked('failed', push, timeoutMs, remote);
  const after = await remoteShas(
    root,
    remote,
    updates.map((update) => update.ref),
    timeoutMs,
  );
  if (after.result.code !== 0) throw blocked('could not be read back', after.result, timeoutMs, remote);
  const wrong = updates.find(({ ref, commit }) => after.shas.get(ref) !== commit);
  if (wrong !== undefined) {
    throw new HandoffError(
      'drain_blocked',
      `publish to '${redactCredentials(remote)}' is unverified: the remote shows ${after.shas.get(wrong.ref) ?? 'no'} ${wrong.ref} instead of ${wrong.commit}`,
      'the handoff is not ready; check the remote, then run `handoff resume`',
    );
  }
  // `push --porcelain` marks a ref the remote already had with '='.
  const pushed = updates.some(({ ref }) => push.stdout.split('\n').some((line) => line.includes(`:${ref}\t`) && !line.startsWith('=')));
  return { pushed, verified: true, lfsObjects: request.route.lfsObjects };
}
