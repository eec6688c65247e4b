import { spawn } from 'node:child_process';
import { redactCredentials } from '../../protocol/index.js';

/** Variables that would point git at another repository, index or prompt; never inherited. */
const DROPPED = new Set([
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
  'GIT_ASKPASS',
  'SSH_ASKPASS',
  'GIT_EDITOR',
  'GIT_SEQUENCE_EDITOR',
  'GIT_PAGER',
]);

/**
 * git that can never wait for a person: no terminal prompt, no askpass, ssh in batch mode, no
 * optional locks (so `status` never rewrites the user's index), C locale for parsable output.
 */
export function gitEnv(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !DROPPED.has(key)) env[key] = value;
  }
  return {
    ...env,
    GIT_TERMINAL_PROMPT: '0',
    GIT_SSH_COMMAND: `${process.env['GIT_SSH_COMMAND'] ?? 'ssh'} -o BatchMode=yes -o ConnectTimeout=10`,
    GCM_INTERACTIVE: 'never',
    GIT_OPTIONAL_LOCKS: '0',
    LC_ALL: 'C',
    ...extra,
  };
}

/** Disables any configured askpass helper and credential dialogs for this one command. */
export const NO_PROMPT_CONFIG = ['-c', 'core.askPass=', '-c', 'credential.interactive=never'];

export interface GitResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
}

export interface GitOptions {
  readonly cwd: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
}

/** After a kill, how long to wait for grandchildren (hooks) to let go of the pipes. */
const DRAIN_AFTER_KILL_MS = 2_000;

/**
 * Runs git in its own process group with stdin closed; on timeout the whole group is killed, so a
 * hook that hangs (and its children) cannot keep the daemon waiting.
 */
export function runGit(args: readonly string[], options: GitOptions): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd: options.cwd, env: gitEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    let settled = false;
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    const finish = (code: number | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), timedOut });
    };
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') reject(error as Error);
      }
      setTimeout(() => finish(null), DRAIN_AFTER_KILL_MS).unref();
    }, options.timeoutMs ?? 30_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      if (!settled) reject(error);
      settled = true;
    });
    child.on('close', (code) => finish(code));
  });
}

export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly result: GitResult,
  ) {
    const what = result.timedOut ? 'timed out' : `exited ${result.code}`;
    const detail = redactCredentials(result.stderr.trim().split('\n').slice(-3).join(' / '));
    super(`git ${args.filter((a) => !a.startsWith('-c') && !a.includes('=')).slice(0, 2).join(' ')} ${what}${detail ? `: ${detail}` : ''}`);
    this.name = 'GitError';
  }
}

/** Runs git and returns trimmed stdout; a non-zero exit or timeout throws a GitError with a safe message. */
export async function git(args: readonly string[], options: GitOptions): Promise<string> {
  const result = await runGit(args, options);
  if (result.code !== 0 || result.timedOut) throw new GitError(args, result);
  return result.stdout.replace(/\n$/, '');
}
