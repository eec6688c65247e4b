import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * The hooks' own copy of two store rules — where the state dir is, and how daemon.json and the token
 * are read — because importing daemon/store costs a status line more than a third of node's own start
 * (crypto, the atomic writers, the permission checks). A unit test holds `hookStateDir` to
 * `resolveStateDir`. A daemon.json this cannot read just means "daemon down" here; the full CLI and
 * the daemon report damage.
 */
export function hookStateDir(env: NodeJS.ProcessEnv, home: string = homedir()): string {
  const explicit = env['HANDOFF_STATE_DIR'];
  if (explicit !== undefined && explicit !== '') return explicit;
  const xdg = env['XDG_STATE_HOME'];
  if (xdg !== undefined && xdg !== '' && isAbsolute(xdg)) return join(xdg, 'session-handoff');
  return join(home, '.local', 'state', 'session-handoff');
}

export interface DaemonAddress {
  readonly port: number;
  readonly token: string;
}

/** The port and bearer token of the daemon serving `stateDir`; throws when there is none to reach. */
export function readDaemonAddress(stateDir: string): DaemonAddress {
  const info = JSON.parse(readFileSync(join(stateDir, 'daemon.json'), 'utf8')) as { port?: unknown };
  const port = info.port;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65_535) throw new Error('daemon.json names no valid port');
  return { port, token: readFileSync(join(stateDir, 'token'), 'utf8').trim() };
}
