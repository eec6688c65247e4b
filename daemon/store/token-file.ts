import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { HandoffError } from '../../protocol/errors.js';
import { AlreadyExistsError, writeFileAtomic, writeFileCreateOnce } from './atomic-write.js';
import { isErrno } from './errno.js';
import { assertPrivate } from './private-path.js';
import { shellQuote } from '../../protocol/shell-quote.js';

const TOKEN_BYTES = 32;
const TOKEN_MODE = 0o600;
// One trailing newline is tolerated because editors add one; the token itself is the 64 digits.
const TOKEN_TEXT = /^([0-9a-fA-F]{64})\n?$/;
// Bounds the read so a huge file planted at the name cannot exhaust memory.
const READ_LIMIT = 256;

/**
 * Returns the bearer token stored at `path`, creating it first when missing. Creation is
 * create-once so two starting daemons agree on one token, and atomic so a crash never leaves half
 * a token that clients would copy.
 */
export async function ensureToken(path: string, uid: number): Promise<string> {
  const existing = await readToken(path, uid);
  if (existing !== null) return existing;
  const token = randomBytes(TOKEN_BYTES).toString('hex');
  try {
    await writeFileCreateOnce(path, token, TOKEN_MODE);
    return token;
  } catch (error) {
    if (!(error instanceof AlreadyExistsError)) throw error;
  }
  // Another starter won the create; its token is the one clients will read.
  const raced = await readToken(path, uid);
  if (raced === null) throw new Error(`token file ${path} vanished while it was being created`);
  return raced;
}

/**
 * Replaces the token with a fresh one and returns it. The daemon calls this once per start, after it
 * holds the instance lock and before it listens, so a token copied from an earlier run (a squatter
 * that caught one, a leaked backup) is dead once the daemon restarts. An existing entry must pass the
 * same checks as a read, so a planted link or a shared file is refused rather than silently replaced;
 * the rename keeps readers from ever seeing half a token.
 */
export async function rotateToken(path: string, uid: number): Promise<string> {
  await readToken(path, uid);
  const token = randomBytes(TOKEN_BYTES).toString('hex');
  await writeFileAtomic(path, token, TOKEN_MODE);
  return token;
}

/** The token at `path` after the private-entry checks; null when there is none. */
export async function readToken(path: string, uid: number): Promise<string | null> {
  try {
    // lstat first so a symlink gets its own clear refusal rather than an ELOOP from open().
    assertPrivate(path, await lstat(path), 'file', uid);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return null;
    throw error;
  }
  // O_NOFOLLOW closes the gap between the lstat and the open; O_NONBLOCK keeps a planted FIFO from hanging us.
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    assertPrivate(path, await handle.stat(), 'file', uid);
    const buffer = Buffer.alloc(READ_LIMIT);
    const { bytesRead } = await handle.read(buffer, 0, READ_LIMIT, 0);
    const match = TOKEN_TEXT.exec(buffer.subarray(0, bytesRead).toString('latin1'));
    if (match?.[1] === undefined) {
      throw new HandoffError(
        'corrupt_record',
        `token file ${path} does not hold a 64-digit hex token`,
        `delete it so the daemon makes a new one: rm ${shellQuote(path)} — clients must then read the new token`,
        { path },
      );
    }
    return match[1];
  } finally {
    await handle.close();
  }
}
