import { constants } from 'node:fs';
import { readFile, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { HandoffError, isHandoffError } from '../../protocol/errors.js';
import { fsyncDir, writeFileAtomic } from './atomic-write.js';
import { isErrno } from './errno.js';
import { shellQuote } from '../../protocol/shell-quote.js';

export const DAEMON_INFO_FILE = 'daemon.json';
/** The Unix socket the CLI and the hooks use: inside the 0700 state dir, so only its owner reaches it. */
export const SOCKET_FILE = 'daemon.sock';
const INFO_MODE = 0o600;
const MAX_PORT = 65_535;

/** What clients read to find the running daemon. */
export interface DaemonInfo {
  readonly pid: number;
  readonly port: number;
  readonly protocol_version: number;
  readonly started_at: string;
}

export async function writeDaemonInfo(dir: string, info: DaemonInfo): Promise<void> {
  // Only the known keys, so a caller's extra fields never leak into a file clients parse.
  const { pid, port, protocol_version, started_at } = info;
  const text = `${JSON.stringify({ pid, port, protocol_version, started_at }, null, 2)}\n`;
  await writeFileAtomic(join(dir, DAEMON_INFO_FILE), text, INFO_MODE);
}

/** null when no daemon.json exists; `corrupt_record` when it exists but is not a valid record. */
export async function readDaemonInfo(dir: string): Promise<DaemonInfo | null> {
  const path = join(dir, DAEMON_INFO_FILE);
  let text: string;
  try {
    text = await readFile(path, { encoding: 'utf8', flag: constants.O_RDONLY | constants.O_NOFOLLOW });
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return null;
    if (isErrno(error, 'ELOOP')) throw corrupt(path, 'is a symlink');
    throw error;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw corrupt(path, `is not valid JSON (${String(error)})`);
  }
  if (!isDaemonInfo(value)) {
    throw corrupt(path, 'lacks a valid pid, port, protocol_version or started_at');
  }
  const { pid, port, protocol_version, started_at } = value;
  return { pid, port, protocol_version, started_at };
}

/**
 * Removes daemon.json only while it still names `pid`, so a stopping daemon never deletes the
 * record of a successor. Returns whether it removed the file.
 */
export async function removeDaemonInfo(dir: string, pid: number): Promise<boolean> {
  let info: DaemonInfo | null;
  try {
    info = await readDaemonInfo(dir);
  } catch (error) {
    // A corrupt record does not provably name us; leave it for the operator, as its hint says.
    if (isHandoffError(error) && error.code === 'corrupt_record') return false;
    throw error;
  }
  if (info === null || info.pid !== pid) return false;
  const path = join(dir, DAEMON_INFO_FILE);
  try {
    await unlink(path);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return false;
    throw error;
  }
  await fsyncDir(dirname(path));
  return true;
}

function isDaemonInfo(value: unknown): value is DaemonInfo {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  const { pid, port, protocol_version: version, started_at: startedAt } = record;
  return (
    isPositiveInteger(pid) && isPositiveInteger(port) && port <= MAX_PORT && isPositiveInteger(version) && typeof startedAt === 'string' && startedAt !== ''
  );
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

function corrupt(path: string, problem: string): HandoffError {
  return new HandoffError(
    'corrupt_record',
    `daemon record ${path} ${problem}`,
    `if no daemon is running, remove it (rm ${shellQuote(path)}) and start the daemon again; nothing was deleted`,
    { path },
  );
}
