import { displayRemote, HandoffError, redactCredentials } from '../../protocol/index.js';
import { dataArg } from './data-arg.js';
import { publishLfs } from './lfs.js';
import { runGit, type GitResult } from './run-git.js';

export interface PublishRequest {
  readonly remote: string;
  readonly commit: string;
  readonly ref: string;
  readonly timeoutMs: number;
}

export interface PublishResult {
  /** false when the remote already had the commit (a resumed drain): nothing was pushed twice. */
  readonly pushed: boolean;
  readonly verified: true;
  /** Git LFS objects the checkpoint points at, uploaded and proven on the remote before the ref. */
  readonly lfsObjects: number;
}

function why(result: GitResult, timeoutMs: number): string {
  // `push --porcelain` reports each ref's fate on stdout; the remote's own words come on stderr.
  const text = redactCredentials(`${result.stdout}\n${result.stderr}`);
  if (result.startError !== undefined) return redactCredentials(result.startError);
  if (result.timedOut) return `timed out after ${Math.round(timeoutMs / 1000)} s (a hook or the network hung)`;
  if (/terminal prompts disabled|could not read (Username|Password)|Authentication failed|Permission denied \(publickey|askpass/i.test(text)) {
    return 'the remote asks for credentials and the daemon never prompts';
  }
  if (/\[remote rejected\]|\[rejected\]|pre-receive hook declined|! \[/i.test(text)) return `the remote rejected the push: ${lastLines(text)}`;
  if (/pre-push/i.test(text) || result.code === 1) return `the push failed: ${lastLines(text)}`;
  return `the remote is unreachable: ${lastLines(text)}`;
}

const lastLines = (text: string) => text.trim().split('\n').slice(-2).join(' / ').slice(0, 400);

async function remoteSha(root: string, remote: string, ref: string, timeoutMs: number): Promise<{ sha: string | null; result: GitResult }> {
  const result = await runGit(['ls-remote', '--refs', '--end-of-options', remote, ref], { cwd: root, timeoutMs });
  const sha = result.code === 0 ? (result.stdout.split('\n').find((line) => line.endsWith(`\t${ref}`))?.split('\t')[0] ?? null) : null;
  return { sha, result };
}

function blocked(step: string, result: GitResult, timeoutMs: number, remote: string): HandoffError {
  return new HandoffError('drain_blocked', `publish to '${displayRemote(remote)}' ${step}: ${why(result, timeoutMs)}`, 'nothing of yours was changed; fix the remote or its hook, then run `handoff resume`');
}

/**
 * Pushes exactly `<commit>:<ref>` (never forced, never another ref) and reads the ref back from the
 * remote. Looks first, so a drain resumed after a crash does not push the same commit twice.
 */
export async function publishRef(root: string, request: PublishRequest): Promise<PublishResult> {
  const { timeoutMs } = request;
  const commit = dataArg(request.commit, 'checkpoint commit');
  const ref = dataArg(request.ref, 'checkpoint ref');
  // Pushing to the URL, not the remote name, keeps git from creating a remote-tracking ref for the
  // handoff branch in the user's repository; `--push` honours pushurl and pushInsteadOf.
  const url = await runGit(['remote', 'get-url', '--push', '--end-of-options', dataArg(request.remote, 'remote name')], { cwd: root, timeoutMs });
  if (url.code !== 0) throw blocked('failed', url, timeoutMs, request.remote);
  const remote = dataArg(url.stdout.trim(), 'remote URL');
  // Content first: once the ref is there, a receiver may fetch it and needs every object.
  const lfs = await publishLfs(root, commit, remote, timeoutMs);
  const before = await remoteSha(root, remote, ref, timeoutMs);
  if (before.result.code !== 0) throw blocked('failed before pushing', before.result, timeoutMs, remote);
  if (before.sha === commit) return { pushed: false, verified: true, lfsObjects: lfs.objects };
  const push = await runGit(['push', '--porcelain', '--no-verify', '--end-of-options', remote, `${commit}:${ref}`], { cwd: root, timeoutMs });
  if (push.code !== 0 || push.timedOut) throw blocked('failed', push, timeoutMs, remote);
  const after = await remoteSha(root, remote, ref, timeoutMs);
  if (after.sha !== commit) {
    throw new HandoffError('drain_blocked', `publish to '${displayRemote(remote)}' is unverified: the remote shows ${after.sha ?? 'no'} ${ref} instead of ${commit}`, 'the handoff is not ready; check the remote, then run `handoff resume`');
  }
  return { pushed: true, verified: true, lfsObjects: lfs.objects };
}
