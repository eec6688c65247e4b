import { spawn } from 'node:child_process';
import { closeSync, constants, fstatSync, lstatSync, openSync, realpathSync, writeSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DAEMON_NODE_FLAGS } from '../node-flags.js';
import { ownPackage } from '../package-root.js';
import { makeDirs, stateDirCause } from '../store/make-dirs.js';
import { privateProblem } from '../store/private-rule.js';

/**
 * Starting the daemon when none answers, shared by the CLI and the SessionStart hook. No protocol or
 * store imports (a hook loads this): the daemon it starts makes every check of its own — the instance
 * guard (never two per state dir), the state dir's privacy, and `auto_start` in the config (the
 * `--auto` flag asks it to).
 */

/** What the started daemon prints (its start line, or why it could not start), appended to. */
export const AUTOSTART_LOG = 'autostart.log';
/** Set to anything but `0` to never start a daemon (tests that expect none, scripts that manage their own). */
export const NO_AUTO_START_ENV = 'HANDOFF_NO_AUTO_START';
/** `daemon_already_running`'s exit code (protocol/codes.ts; a unit test holds them equal): another starter won. */
export const ALREADY_RUNNING_EXIT = 75;
const SOCKET = 'daemon.sock';
const POLL_MS = 50;

export function autoStartOffByEnv(env: NodeJS.ProcessEnv): boolean {
  const value = env[NO_AUTO_START_ENV];
  return value !== undefined && value !== '' && value !== '0';
}

/** The CLI entry that runs this very code — the installed `handoff`, links resolved — so the daemon is the same version. */
export function cliEntry(): string {
  return realpathSync(ownPackage().cli);
}

export interface StartedDaemon {
  readonly log: string;
  /** The started process's exit code, once it exits (a daemon that serves never does). */
  readonly exited: Promise<number | null>;
  exitCode(): number | null | undefined;
}

/** Why no daemon was started; `unusable` when the file system will not let the state dir be made or written. */
export interface StartRefused {
  readonly refused: string;
  readonly unusable: boolean;
}

/**
 * Spawns `handoff daemon --auto --state-dir DIR` (with DAEMON_NODE_FLAGS) detached from this process (its own session, stdio
 * to the log), so it outlives the command or hook that started it, or says why it could not.
 */
export function spawnDaemon(stateDir: string, env: NodeJS.ProcessEnv = process.env): StartedDaemon | StartRefused {
  const uid = process.getuid?.() ?? 0;
  const log = join(stateDir, AUTOSTART_LOG);
  let fd: number;
  try {
    makeDirs(stateDir, 0o700);
    const dirProblem = privateProblem(lstatSync(stateDir), 'directory', uid);
    if (dirProblem !== null) return { refused: `${stateDir} is not a private directory of this user (${dirProblem})`, unusable: false };
    fd = openSync(log, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
  } catch (error) {
    const cause = stateDirCause(error);
    if (cause === null) throw error;
    return { refused: `cannot make or write the state dir ${stateDir}: ${cause}`, unusable: true };
  }
  try {
    const logProblem = privateProblem(fstatSync(fd), 'file', uid);
    if (logProblem !== null) return { refused: `${log} is not a private file of this user (${logProblem})`, unusable: false };
    writeSync(fd, `${new Date().toISOString()} started by pid ${process.pid} because no daemon answered\n`);
    // cwd '/': the daemon must not keep whatever directory the command ran in busy.
    const child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, cliEntry(), 'daemon', '--auto', '--state-dir', stateDir], {
      detached: true,
      stdio: ['ignore', fd, fd],
      cwd: '/',
      env,
    });
    child.unref();
    let code: number | null | undefined;
    const exited = new Promise<number | null>((resolve) => {
      child.once('exit', (exit) => resolve((code = exit)));
      child.once('error', () => resolve((code = null)));
    });
    return { log, exited, exitCode: () => code };
  } finally {
    closeSync(fd);
  }
}

/** Whether something accepts connections on the state dir's socket (the hooks then check it before sending the token). */
export function socketAnswers(stateDir: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ path: join(stateDir, SOCKET) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export type WaitOutcome = { readonly kind: 'up' } | { readonly kind: 'exited'; readonly code: number | null } | { readonly kind: 'timeout' };

/**
 * Polls `answers` until it is true, the started daemon exits for a reason of its own, or `deadlineMs`
 * passed. A start that lost the instance guard to another starter is not a failure: that one answers soon.
 */
export async function waitForDaemon(started: StartedDaemon, answers: () => Promise<boolean>, deadlineMs: number): Promise<WaitOutcome> {
  // Monotonic: a wall-clock step must not stretch or cut the wait (daemon/clock.ts).
  const deadline = performance.now() + deadlineMs;
  for (;;) {
    if (await answers()) return { kind: 'up' };
    const code = started.exitCode();
    if (code !== undefined && code !== ALREADY_RUNNING_EXIT) return { kind: 'exited', code };
    if (performance.now() > deadline) return { kind: 'timeout' };
    await sleep(POLL_MS);
  }
}
