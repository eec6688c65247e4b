import { isGitEnvKey } from '@simple-git/argv-parser';
import { simpleGit, type SimpleGit } from 'simple-git';

/**
 * git that can never wait for a person: no terminal prompt, no askpass helper, ssh in batch mode,
 * and a timeout on every process. stdin of the child is never a terminal of ours.
 */
export const NON_INTERACTIVE_ENV: Readonly<Record<string, string>> = Object.freeze({
  GIT_TERMINAL_PROMPT: '0',
  GIT_SSH_COMMAND: 'ssh -o BatchMode=yes -o ConnectTimeout=10',
  GCM_INTERACTIVE: 'never',
  LC_ALL: 'C',
});

export function gitClient(baseDir: string, timeoutMs = 15_000): SimpleGit {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    // Variables that steer git (GIT_DIR from a hook, an askpass helper that could pop a dialog, an
    // editor or pager) never reach the daemon's git: simple-git refuses a task that passes one.
    const lower = key.toLowerCase();
    if (value !== undefined && !lower.startsWith('git_') && !isGitEnvKey(lower)) env[key] = value;
  }
  return simpleGit({
    baseDir,
    maxConcurrentProcesses: 4,
    timeout: { block: timeoutMs },
    unsafe: { allowUnsafeSshCommand: true },
    allowEnvironment: Object.keys(NON_INTERACTIVE_ENV),
  }).env({ ...env, ...NON_INTERACTIVE_ENV });
}
