import { chmod, lstat, unlink } from 'node:fs/promises';
import type { Server } from 'node:http';
import { HandoffError } from '../../protocol/index.js';
import { shellQuote } from '../../protocol/shell-quote.js';
import { isErrno } from '../store/errno.js';

const SOCKET_MODE = 0o600;
// sun_path holds 108 bytes on Linux and 104 on macOS, the terminating NUL included.
const MAX_SOCKET_PATH_BYTES = 103;

/**
 * Listens on the Unix socket in the state dir. The caller holds the instance lock, so a socket left at
 * `path` is a dead daemon's (killed before it could remove it) and is replaced. The socket is made
 * 0600 although the 0700 dir already keeps every other user out: one check fewer to get wrong.
 */
export async function listenLocalSocket(server: Server, path: string): Promise<void> {
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
    throw new HandoffError(
      'usage_error',
      `the socket path ${path} is longer than the ${MAX_SOCKET_PATH_BYTES} bytes a Unix socket address holds`,
      'use a shorter state dir path (HANDOFF_STATE_DIR or --state-dir)',
      { path },
    );
  }
  await removeStale(path);
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen({ path }, () => {
      server.off('error', onError);
      resolve();
    });
  });
  await chmod(path, SOCKET_MODE);
}

/** Stops accepting, ends open connections and waits; node removes the socket file on close. */
export async function closeLocalSocket(server: Server): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}

async function removeStale(path: string): Promise<void> {
  let stat;
  try {
    stat = await lstat(path);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return;
    throw error;
  }
  if (stat.isDirectory()) {
    throw new HandoffError(
      'corrupt_record',
      `${path} is a directory where the daemon's socket belongs`,
      `move it away (mv ${shellQuote(path)} ${shellQuote(`${path}.old`)}) and start the daemon again`,
      { path },
    );
  }
  await unlink(path);
}
