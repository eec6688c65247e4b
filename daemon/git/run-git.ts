import type { ChildProcess } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { simpleGit, GitPluginError, type SimpleGit } from 'simple-git';
import { redactCredentials } from '../../protocol/index.js';
import { CONFIG_OVERRIDES, gitEnv, gitNames, pinPack } from './git-env.js';
import { forgetLauncher, groupLauncher, killGroup } from './process-group.js';

export interface GitResult {
  /** git's exit code; null when it was killed (timeout) or never started. */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  /** Why git did not run at all (spawn failure, refused arguments), with what to do; absent when it ran. */
  readonly startError?: string;
}

export interface GitOptions {
  readonly cwd: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
  /** Text for git's stdin; without it stdin is closed at once. */
  readonly input?: string;
  /** How stdout is decoded: 'latin1' keeps one character per byte for binary output. */
  readonly stdoutEncoding?: 'utf8' | 'latin1';
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** After a kill, how long to wait for the pipes to close before reporting the timeout anyway. */
const DRAIN_AFTER_KILL_MS = 2_000;
/** Between the TERM and the KILL of a timed-out git's process group. */
const TERM_GRACE_MS = 500;

const SPAWN_HINTS: Readonly<Record<string, string>> = {
  ENOENT: "git is not installed or not on the daemon's PATH; install it, then run `handoff resume`",
  EACCES: "the git binary on the daemon's PATH is not executable",
  EMFILE: 'the daemon ran out of file descriptors; it keeps running, run `handoff resume` when the load drops',
  ENFILE: 'the system ran out of file descriptors; run `handoff resume` when the load drops',
  EAGAIN: 'the system could not start another process; run `handoff resume` when the load drops',
};

function spawnFailure(code: string | undefined): string {
  const hint = SPAWN_HINTS[code ?? ''] ?? 'run `handoff resume` once git can be started again';
  return `git could not be started (${code ?? 'unknown error'}): ${hint}`;
}

const sameArgv = (a: readonly string[] | undefined, b: readonly string[]) => a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Runs one git command through simple-git: the built environment, the layer's config overrides,
 * stdin closed, a wall-clock timeout. Never rejects for git's own failures: a non-zero exit, a
 * timeout and a spawn failure are all results.
 */
export async function runGit(args: readonly string[], options: GitOptions): Promise<GitResult> {
  const pack = pinPack(args);
  if (pack.refused !== undefined) return { code: null, stdout: '', stderr: '', timedOut: false, startError: `refused before running git: ${pack.refused}` };
  const env = gitEnv(options.env);
  const launcher = await groupLauncher(env['PATH']);
  if (launcher === null) return { code: null, stdout: '', stderr: '', timedOut: false, startError: spawnFailure('ENOENT') };
  const argv = [...CONFIG_OVERRIDES, ...pack.args];
  const spawnedArgv = [...launcher.argv0, ...argv];
  const controller = new AbortController();
  let child: ChildProcess | null = null;
  let startError: string | undefined;
  let exit: { code: number | null; stdout: Buffer; stderr: Buffer } | null = null;
  const started = new Set<ChildProcess>();

  // simple-git hands back neither the child process nor its pid. Node announces every child on
  // this channel: it is how the layer finds git's pid (to kill its process group) and closes stdin.
  const onChild = (message: unknown) => {
    const spawned = (message as { process: ChildProcess }).process;
    started.add(spawned);
    // EMFILE/ENFILE: Node emits 'error' on the next tick on a child that has no stdio, before
    // simple-git listens, and an unheard 'error' would end the daemon (issue 13, found 6).
    process.nextTick(() => {
      if ((spawned.stdout ?? null) === null && sameArgv(spawned.spawnargs, spawnedArgv))
        spawned.once('error', (error: NodeJS.ErrnoException) => (startError ??= spawnFailure(error.code)));
    });
  };

  let client: SimpleGit;
  try {
    client = simpleGit({
      baseDir: options.cwd,
      binary: launcher.binary,
      abort: controller.signal,
      // Done when the pipes close, as git's output is complete only then; a hang is the timeout's.
      completion: { onClose: true, onExit: false },
      allowEnvironment: gitNames(env),
      // The guard stays on for everything else; these are the layer's own protective settings
      // (CONFIG_OVERRIDES, GIT_SSH_COMMAND, the empty GIT_PROXY_COMMAND), which simple-git cannot tell
      // from hostile ones.
      // The pack pin is the layer's too, and the guard cannot tell it from a hostile --upload-pack: it
      // is lifted for exactly the calls that carry the pin (every other option there is the daemon's own).
      unsafe: {
        allowUnsafeAskPass: true,
        allowUnsafeHooksPath: true,
        allowUnsafeFsMonitor: true,
        allowUnsafeSshCommand: true,
        allowUnsafeGitProxy: true,
        allowUnsafePack: pack.pinned,
        // The binary is the daemon's own PATH lookup, never input; the check refuses e.g. a space in a home directory.
        allowUnsafeCustomBinary: true,
      },
      ...(options.input === undefined ? {} : { input: () => options.input }),
      errors: (error, result) => {
        exit = { code: result.exitCode, stdout: Buffer.concat(result.stdOut), stderr: Buffer.concat(result.stdErr) };
        // git's own exit status is a result for the caller; only the guard and the abort are errors.
        return error instanceof GitPluginError ? error : undefined;
      },
    })
      // simple-git copies this plain object again per call: well under a microsecond, kept.
      .env(env)
      .outputHandler((_command, stdout) => {
        for (const candidate of started) {
          if (candidate.stdout !== stdout) continue;
          child = candidate;
          candidate.once('error', (error: NodeJS.ErrnoException) => (startError ??= spawnFailure(error.code)));
          if (options.input === undefined) candidate.stdin?.end();
          // simple-git waits 50 ms more after a git that printed nothing (most plumbing); an empty
          // chunk when the pipes have closed tells it the output is complete.
          candidate.once('close', () => stdout.emit('data', Buffer.alloc(0)));
        }
      });
  } catch (error) {
    return { code: null, stdout: '', stderr: '', timedOut: false, startError: `git could not be started in ${options.cwd}: ${(error as Error).message}` };
  }

  let timedOut = false;
  let killed: () => void = () => undefined;
  let drained: () => void = () => undefined;
  const afterKill = new Promise<void>((resolve) => (killed = resolve));
  const afterDrain = new Promise<void>((resolve) => (drained = resolve));
  const timer = setTimeout(() => {
    timedOut = true;
    const timedOutChild = child;
    // TERM first: git removes its lock files (a killed git would leave index.lock or a ref lock
    // in the user's repository); KILL a moment later for anything that ignored it.
    if (timedOutChild !== null) killGroup(timedOutChild, launcher.grouped, 'SIGTERM');
    controller.abort();
    setTimeout(() => {
      if (timedOutChild !== null) killGroup(timedOutChild, launcher.grouped, 'SIGKILL');
      killed();
      setTimeout(drained, DRAIN_AFTER_KILL_MS).unref();
    }, TERM_GRACE_MS).unref();
  }, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);

  subscribe('child_process', onChild);
  let failure: unknown = null;
  try {
    await Promise.race([client.raw([...argv]).catch((error: unknown) => (failure = error)), afterDrain]);
    // A timed-out call returns only once its group had the KILL too: nothing of it outlives the call.
    if (timedOut) await afterKill;
  } finally {
    clearTimeout(timer);
    unsubscribe('child_process', onChild);
  }
  const done = exit as { code: number | null; stdout: Buffer; stderr: Buffer } | null;
  const stdout = done?.stdout.toString(options.stdoutEncoding ?? 'utf8') ?? '';
  const stderr = done?.stderr.toString('utf8') ?? '';
  if (timedOut) return { code: null, stdout, stderr, timedOut };
  if (launcher.grouped && done?.code === 127 && /^setsid: failed to execute /m.test(stderr)) startError ??= spawnFailure('ENOENT');
  if (startError === spawnFailure('ENOENT')) forgetLauncher(env['PATH']);
  if (startError === undefined && failure !== null) {
    // The guard refused the arguments, or simple-git failed before git ran (e.g. EMFILE).
    startError = failure instanceof GitPluginError ? `refused before running git: ${failure.message}` : spawnFailure(undefined);
  }
  return startError === undefined ? { code: done?.code ?? null, stdout, stderr, timedOut } : { code: null, stdout, stderr, timedOut, startError };
}

/** git's words when a repository's LFS filter or an `git lfs` command finds no git-lfs. */
export const MISSING_LFS = /git-lfs: (command )?not found|'lfs' is not a git command/;
export const LFS_HINT = 'install git-lfs (Debian/Ubuntu: apt-get install git-lfs), then run `handoff resume`';

function commandOf(args: readonly string[]): string {
  const words: string[] = [];
  for (let i = 0; i < args.length && words.length < 2; i++) {
    const arg = args[i] ?? '';
    // Data (a URL, a ref, a path) is never part of the command's name in a message.
    if (arg === '--end-of-options' || arg === '--') break;
    if (arg === '-c') i++;
    else if (!arg.startsWith('-')) words.push(arg);
  }
  return words.join(' ');
}

export class GitError extends Error {
  readonly hint: string;
  constructor(
    readonly args: readonly string[],
    readonly result: GitResult,
    timeoutMs?: number,
  ) {
    const what =
      result.startError !== undefined
        ? 'did not run'
        : result.timedOut
          ? `timed out${timeoutMs === undefined ? '' : ` after ${Math.round(timeoutMs / 1000)} s`}`
          : `exited ${result.code}`;
    const lfsMissing = MISSING_LFS.test(result.stderr);
    const detail = redactCredentials(
      result.startError ??
        `${lfsMissing ? 'git-lfs is not installed and the repository uses Git LFS: ' : ''}${result.stderr.trim().split('\n').slice(-3).join(' / ')}`,
    );
    super(redactCredentials(`git ${commandOf(args)} ${what}${detail ? `: ${detail}` : ''}`));
    this.name = 'GitError';
    this.hint = lfsMissing
      ? LFS_HINT
      : result.timedOut
        ? 'raise git_timeout_seconds if the repository is large, then run `handoff resume`'
        : 'run `handoff resume` once the cause is fixed';
  }
}

/** Runs git and returns stdout without its last newline; a non-zero exit, timeout or spawn failure throws a GitError. */
export async function git(args: readonly string[], options: GitOptions): Promise<string> {
  const result = await runGit(args, options);
  if (result.code !== 0 || result.timedOut || result.startError !== undefined) throw new GitError(args, result, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  return result.stdout.replace(/\n$/, '');
}
