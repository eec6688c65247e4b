import { readFile, rm } from 'node:fs/promises';
import { blockedWayOut, checkpointRef, leaseRef, packagesRef, printable, type WayOutFailure } from '../../protocol/index.js';
import type { WayOut } from '../../schemas/index.js';
import { chooseRemote, dataArg, headAndIndex, lfsPointers, probeLfsEndpoint, pushFailure, pushWords, runGit, type GitResult } from '../git/index.js';
import { writeFileAtomic } from '../store/index.js';

/** What a rehearsal proves; `checked_at` is the caller's (its clock). */
export type ProvedWayOut = Omit<WayOut, 'checked_at'>;

export interface ProbeOptions {
  readonly timeoutMs: number;
  /** A cycle id the drain could have chosen: the dry run pushes exactly its refspecs. */
  readonly probeCycle: string;
  /**
   * Where the probe ref is noted before it is pushed and forgotten once it is gone again: a crash in
   * between leaves its name, and the next rehearsal deletes it first (no ref of a rehearsal outlives it).
   */
  readonly pendingFile: string;
  /** The daemon's own environment: whether it has an SSH agent. */
  readonly env: NodeJS.ProcessEnv;
  /** Asked between steps: false once the workspace left NORMAL/PREPARE (a drain must not compete). */
  readonly stillWanted: () => boolean;
}

/** The probe's namespace on the remote: no drain, receiver or prune reads it (docs/refs.md). */
const probeRef = (cycle: string) => `refs/handoff/rehearsal/${cycle}`;

const failed = (result: GitResult) => result.code !== 0 || result.timedOut || result.startError !== undefined;

function transportOf(url: string): WayOutFailure['transport'] {
  if (/^https?:\/\//i.test(url)) return 'http';
  if (/^ssh:\/\//i.test(url) || (/^[^/:]+:/.test(url) && !/^[a-z][a-z0-9+.-]*:\/\//i.test(url))) return 'ssh';
  return 'local';
}

function blocked(remote: string, proven: readonly string[], failure: Omit<WayOutFailure, 'remote'>): ProvedWayOut {
  const { cause, fix } = blockedWayOut({ remote, ...failure });
  // The remote's words are data: no control character reaches a terminal or the journal.
  return { state: 'blocked', cause: printable(cause).slice(0, 1000), fix: printable(fix).slice(0, 1000), remote, proven: [...proven] };
}

/** A commit the remote advertises that this clone has too: a ref pointing there sends no new byte. */
async function sharedCommit(root: string, listing: string, timeoutMs: number): Promise<string | null> {
  const shas = [
    ...new Set(
      listing
        .split('\n')
        .map((line) => line.split('\t'))
        .filter(([sha, ref]) => /^[0-9a-f]{40,64}$/.test(sha ?? '') && (ref ?? '').startsWith('refs/heads/'))
        .map(([sha]) => sha ?? ''),
    ),
  ].slice(0, 50);
  if (shas.length === 0) return null;
  const known = await runGit(['cat-file', '--batch-check=%(objectname) %(objecttype)'], { cwd: root, input: `${shas.join('\n')}\n`, timeoutMs });
  if (failed(known)) return null;
  return (
    known.stdout
      .split('\n')
      .find((line) => line.endsWith(' commit'))
      ?.split(' ')[0] ?? null
  );
}

/** Deletes a probe ref a crashed rehearsal left on the remote (noted in the pending file). */
async function clearLeftover(root: string, options: ProbeOptions): Promise<void> {
  const noted = await readFile(options.pendingFile, 'utf8').then(
    (text) => JSON.parse(text) as { url?: unknown; ref?: unknown },
    () => null,
  );
  if (noted !== null && typeof noted.url === 'string' && typeof noted.ref === 'string' && noted.ref.startsWith('refs/handoff/rehearsal/')) {
    const url = dataArg(noted.url, 'remote URL');
    await runGit(['push', '--porcelain', '--no-verify', '--end-of-options', url, `:${dataArg(noted.ref, 'ref')}`], { cwd: root, timeoutMs: options.timeoutMs });
    const left = await runGit(['ls-remote', '--refs', '--end-of-options', url, noted.ref], { cwd: root, timeoutMs: options.timeoutMs });
    // Still there (or not known): kept noted, so the next rehearsal tries again.
    if (failed(left) || left.stdout.trim() !== '') return;
  }
  await rm(options.pendingFile, { force: true });
}

/**
 * PREPARE's proof of the way out, from the daemon's own process environment: the remote the drain
 * would use answers and authenticates without prompting (`ls-remote`), accepts the drain's exact
 * refspecs (`push --dry-run`), and its server policy (pre-receive hooks, which no dry run reaches)
 * accepts a probe ref under refs/handoff/ pointing at a commit it already has — deleted again at
 * once, so no new byte leaves and the remote's refs are as before. Nothing of the user's is touched:
 * the pushes name the URL, so not even a remote-tracking ref is written. Null when the workspace
 * stopped wanting it midway (a drain began).
 */
export async function proveWayOut(root: string, options: ProbeOptions): Promise<ProvedWayOut | null> {
  const { timeoutMs } = options;
  const timeoutSeconds = Math.round(timeoutMs / 1000);
  const remote = await chooseRemote(root);
  if (remote === null) return { state: 'proven', cause: null, fix: null, remote: null, proven: [] };
  const { head } = await headAndIndex(root);
  if (head === null) {
    return { state: 'unknown', cause: 'HEAD has no commit yet, so there is nothing to rehearse a push with', fix: null, remote, proven: [] };
  }
  const named = await runGit(['remote', 'get-url', '--push', '--end-of-options', dataArg(remote, 'remote name')], { cwd: root, timeoutMs });
  const base = { transport: 'local' as const, sshAgent: Boolean(options.env['SSH_AUTH_SOCK']), timeoutSeconds };
  if (failed(named)) return blocked(remote, [], { ...base, step: 'url', kind: pushFailure(named), words: pushWords(named) });
  const url = dataArg(named.stdout.trim(), 'remote URL');
  const context = { ...base, transport: transportOf(url) };
  await clearLeftover(root, options);
  if (!options.stillWanted()) return null;

  const listed = await runGit(['ls-remote', '--refs', '--end-of-options', url], { cwd: root, timeoutMs });
  if (failed(listed)) return blocked(remote, [], { ...context, step: 'answer', kind: pushFailure(listed), words: pushWords(listed) });
  const proven = ['answers without a prompt'];
  if (!options.stillWanted()) return null;

  const cycle = options.probeCycle;
  const refspecs = [checkpointRef(cycle, 'out'), packagesRef(cycle), leaseRef(cycle)].map((ref) => `${head}:${ref}`);
  const dry = await runGit(['push', '--dry-run', '--atomic', '--porcelain', '--no-verify', '--end-of-options', url, ...refspecs], { cwd: root, timeoutMs });
  if (failed(dry)) return blocked(remote, proven, { ...context, step: 'dry_run', kind: pushFailure(dry), words: pushWords(dry) });
  proven.push('takes the handoff refs (dry run)');
  if (!options.stillWanted()) return null;

  // The drain uploads LFS content with git-lfs first; without it, or without an endpoint that answers,
  // the evacuation blocks. The endpoint is asked for a download (the drain's own read-back): nothing is uploaded.
  const [pointer] = await lfsPointers(root, head);
  if (pointer !== undefined) {
    const lfs = await runGit(['lfs', 'version'], { cwd: root, timeoutMs });
    if (failed(lfs)) return blocked(remote, proven, { ...context, step: 'lfs', kind: pushFailure(lfs), words: pushWords(lfs) || 'not found' });
    if (!options.stillWanted()) return null;
    const answered = await probeLfsEndpoint(pointer, url, root, timeoutMs);
    if (!answered.ok) {
      return blocked(remote, proven, { ...context, step: 'lfs_endpoint', kind: answered.kind, words: answered.words, endpoint: answered.endpoint });
    }
    proven.push('git-lfs runs and its endpoint answers (a download probe, nothing uploaded)');
  }
  if (!options.stillWanted()) return null;

  const shared = await sharedCommit(root, listed.stdout, timeoutMs);
  if (shared === null) {
    proven.push('server hooks not probed: the remote has no commit this clone has');
    return { state: 'proven', cause: null, fix: null, remote, proven };
  }
  const ref = probeRef(cycle);
  await writeFileAtomic(options.pendingFile, JSON.stringify({ url, ref }), 0o600);
  const created = await runGit(['push', '--porcelain', '--no-verify', '--end-of-options', url, `${shared}:${ref}`], { cwd: root, timeoutMs });
  // Always, whatever the create answered: a timed-out create may have landed.
  await runGit(['push', '--porcelain', '--no-verify', '--end-of-options', url, `:${ref}`], { cwd: root, timeoutMs });
  const left = await runGit(['ls-remote', '--refs', '--end-of-options', url, ref], { cwd: root, timeoutMs });
  if (failed(left) || left.stdout.trim() !== '') {
    return blocked(remote, proven, { ...context, step: 'probe_cleanup', kind: pushFailure(left), words: pushWords(left), probeRef: ref });
  }
  await rm(options.pendingFile, { force: true });
  if (failed(created)) return blocked(remote, proven, { ...context, step: 'policy', kind: pushFailure(created), words: pushWords(created) });
  proven.push('server hooks take refs/handoff/');
  return { state: 'proven', cause: null, fix: null, remote, proven };
}
