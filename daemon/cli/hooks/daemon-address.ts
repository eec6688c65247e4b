import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { privateProblem, type PrivateKind } from '../../store/private-rule.js';

/**
 * The hooks' own copy of two store rules — where the state dir is, and how the token is read —
 * because importing daemon/store costs a status line more than a third of node's own start (crypto,
 * the atomic writers, the refusal messages). The privacy rule itself is shared (private-rule.ts, no
 * imports). A unit test holds `hookStateDir` to `resolveStateDir`. Anything this cannot trust just
 * means "daemon down" here; the full CLI and the daemon report it with its fix.
 */
export function hookStateDir(env: NodeJS.ProcessEnv, home: string = homedir()): string {
  const explicit = env['HANDOFF_STATE_DIR'];
  if (explicit !== undefined && explicit !== '') return explicit;
  const xdg = env['XDG_STATE_HOME'];
  if (xdg !== undefined && xdg !== '' && isAbsolute(xdg)) return join(xdg, 'session-handoff');
  return join(home, '.local', 'state', 'session-handoff');
}

export interface DaemonAddress {
  /** The daemon's Unix socket: only the daemon can have made it inside the private state dir. */
  readonly socketPath: string;
  readonly token: string;
}

const TOKEN_TEXT = /^([0-9a-fA-F]{64})\n?$/;
const TOKEN_READ_LIMIT = 256;

function assertPrivateEntry(path: string, stat: Parameters<typeof privateProblem>[0], kind: PrivateKind, uid: number): void {
  const problem = privateProblem(stat, kind, uid);
  if (problem !== null) throw new Error(`${path} is not a private ${kind} of this user (${problem}); run \`handoff status\` for the fix`);
}

/**
 * The socket and bearer token of the daemon serving `stateDir`; throws when there is none, or when the
 * state dir, the socket or the token is not what the daemon itself demands (a symlink, shared, or
 * someone else's): the token is sent to nothing else.
 */
export function readDaemonAddress(stateDir: string, uid: number = process.getuid?.() ?? 0): DaemonAddress {
  assertPrivateEntry(stateDir, lstatSync(stateDir), 'directory', uid);
  const socketPath = join(stateDir, 'daemon.sock');
  assertPrivateEntry(socketPath, lstatSync(socketPath), 'socket', uid);
  const tokenPath = join(stateDir, 'token');
  // O_NOFOLLOW so a link is refused, O_NONBLOCK so a planted FIFO cannot hang the agent.
  const fd = openSync(tokenPath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    assertPrivateEntry(tokenPath, fstatSync(fd), 'file', uid);
    const buffer = Buffer.alloc(TOKEN_READ_LIMIT);
    const match = TOKEN_TEXT.exec(buffer.subarray(0, readSync(fd, buffer, 0, TOKEN_READ_LIMIT, 0)).toString('latin1'));
    if (match?.[1] === undefined) throw new Error(`${tokenPath} does not hold a token`);
    return { socketPath, token: match[1] };
  } finally {
    closeSync(fd);
  }
}
