import { chmod, lstat } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { fsyncDir } from './atomic-write.js';
import { HandoffError } from '../../protocol/errors.js';
import { isErrno } from './errno.js';
import { makeDirs, STATE_DIR_HINT, stateDirCause } from './make-dirs.js';
import { assertPrivate } from './private-path.js';
import { ensureToken, readToken } from './token-file.js';

const DIR_MODE = 0o700;
const APP_DIR = 'session-handoff';
export const TOKEN_FILE = 'token';

export interface StateDir {
  readonly dir: string;
  /** The bearer token every HTTP request must carry. */
  readonly token: string;
}

/**
 * `$HANDOFF_STATE_DIR`, else `$XDG_STATE_HOME/session-handoff`, else
 * `<home>/.local/state/session-handoff`. Empty values count as unset, and a relative
 * XDG_STATE_HOME is ignored as the XDG spec requires, so a stray value cannot move the dir
 * with the current working directory.
 */
export function resolveStateDir(env: NodeJS.ProcessEnv, homeDir: string): string {
  const explicit = nonEmpty(env['HANDOFF_STATE_DIR']);
  if (explicit !== undefined) return explicit;
  const xdg = nonEmpty(env['XDG_STATE_HOME']);
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, APP_DIR);
  return join(homeDir, '.local', 'state', APP_DIR);
}

/**
 * Creates the state dir (0700) when missing, refuses one that others can reach, then loads or
 * creates the token. Checks run on what is actually there after creation, so a dir created
 * concurrently by someone else is checked too.
 */
export async function openStateDir(dir: string, opts: { uid: number }): Promise<StateDir> {
  try {
    await createIfMissing(dir);
    assertPrivate(dir, await lstat(dir), 'directory', opts.uid);
    const token = await ensureToken(join(dir, TOKEN_FILE), opts.uid);
    return { dir, token };
  } catch (error) {
    throw unusable(dir, error);
  }
}

/** A state dir the file system will not let us make or write is the user's to fix: one line, not "a bug in handoff". */
export function unusable(dir: string, error: unknown): unknown {
  const cause = stateDirCause(error);
  return cause === null ? error : new HandoffError('state_dir_unusable', `cannot make or write the state dir ${dir}: ${cause}`, STATE_DIR_HINT);
}

/**
 * The client side of the same checks: the CLI holds the token only after the state dir and the token
 * file passed exactly what the daemon demands (one rule, one refusal, one exit code). null when
 * either is missing: then no daemon serves this dir.
 */
export async function readClientToken(dir: string, uid: number): Promise<string | null> {
  try {
    assertPrivate(dir, await lstat(dir), 'directory', uid);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return null;
    throw unusable(dir, error);
  }
  return readToken(join(dir, TOKEN_FILE), uid);
}

async function createIfMissing(dir: string): Promise<void> {
  try {
    await lstat(dir);
    return;
  } catch (error) {
    if (!isErrno(error, 'ENOENT')) throw error;
  }
  const created = makeDirs(dir, DIR_MODE);
  if (created === undefined) return;
  // The umask may have stripped bits; only fix the mode of a dir we made, never a user's own dir.
  await chmod(dir, DIR_MODE);
  // Without this the new entry can vanish in a power loss while the token inside it survived a sync.
  await fsyncDir(dirname(dir));
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
