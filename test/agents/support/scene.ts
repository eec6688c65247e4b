import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CLI, startDaemon, until, type DaemonProcess } from '../../support/daemon.js';
import { git, tempDir, tempRepo } from '../../support/git.js';

export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * What one user has: a HOME of their own, `handoff` on PATH (as `npm link` or a global install puts it),
 * a repository, and the daemon running with the default state dir of that HOME, so the installed hooks
 * find it without a `--state-dir` of their own.
 */
export interface Scene {
  readonly home: string;
  readonly repo: string;
  readonly stateDir: string;
  readonly daemon: DaemonProcess;
  /** The environment every process of this user gets: the agent's, the hooks' and the CLI's. */
  readonly env: NodeJS.ProcessEnv;
  handoff(args: readonly string[], input?: string): Promise<Run>;
  status(): Promise<Record<string, unknown>>;
  untilState(state: string): Promise<void>;
  stop(): Promise<void>;
}

export function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number },
): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      command,
      args,
      { cwd: options.cwd, env: options.env, encoding: 'utf8', timeout: options.timeoutMs ?? 120_000, maxBuffer: 32 * 1024 * 1024, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
    child.stdin?.end(options.input ?? '');
  });
}

/** The agents' own switches for updates, telemetry and error reports, whatever else a test adds. */
const QUIET = {
  DISABLE_AUTOUPDATER: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  NO_UPDATE_NOTIFIER: '1',
  npm_config_update_notifier: 'false',
};

/**
 * A user's machine for one agent: HOME, `handoff` on PATH, a repository with a bare remote and the
 * real daemon. `config` is the daemon's config.json, written before it starts (from the scene's
 * paths: an outfile in HOME, the repository), as the user would with `handoff config set`.
 */
export async function startScene(agentEnv: NodeJS.ProcessEnv = {}, config?: (where: { home: string; repo: string }) => object): Promise<Scene> {
  const home = tempDir('agent-home');
  const bin = join(home, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'handoff'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(join(bin, 'handoff'), 0o755);
  const stateDir = join(home, '.local', 'state', 'session-handoff');
  const env: NodeJS.ProcessEnv = {
    PATH: `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
    HOME: home,
    USER: process.env['USER'] ?? 'root',
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
    TMPDIR: process.env['TMPDIR'] ?? '/tmp',
    // The hooks and the CLI find the daemon from HOME, as they would for this user.
    HANDOFF_STATE_DIR: '',
    XDG_STATE_HOME: '',
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    ...QUIET,
    ...agentEnv,
  };
  const repo = tempRepo();
  // A bare remote: the evacuation pushes the checkpoint branch there, as it would to a real one.
  const remote = join(tempDir('agent-remote'), 'remote.git');
  git(repo, 'init', '-q', '--bare', remote);
  git(repo, 'remote', 'add', 'origin', remote);
  git(repo, 'push', '-q', '-u', 'origin', 'main');
  if (config !== undefined) {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    writeFileSync(join(stateDir, 'config.json'), JSON.stringify(config({ home, repo })), { mode: 0o600 });
  }
  const daemon = await startDaemon(stateDir, { ...env, HANDOFF_NO_AUTO_START: '1' });
  const handoff = (args: readonly string[], input?: string) => run(process.execPath, [CLI, ...args], { cwd: repo, env, input, timeoutMs: 30_000 });
  const status = async () => {
    const result = await handoff(['status', '--json']);
    return (JSON.parse(result.stdout) as { data: Record<string, unknown> }).data;
  };
  return {
    home,
    repo,
    stateDir,
    daemon,
    env,
    handoff,
    status,
    untilState: (state) => until(state, async () => ((await status())['state'] === state ? true : undefined), 30_000).then(() => undefined),
    // An agent's home holds what it unpacks on first run (Codex: about 20 MB of skills): not left behind.
    stop: async () => {
      await daemon.stop();
      for (const dir of [home, repo, dirname(remote)]) rmSync(dir, { recursive: true, force: true });
    },
  };
}
