import { request } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { failure, type Envelope } from '../../protocol/index.js';
import { readDaemonInfo, TOKEN_FILE } from '../store/index.js';

export interface CallOptions {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: unknown;
  readonly query?: Record<string, string>;
  readonly timeoutMs?: number;
}

const unreachable = (stateDir: string, why: string): Envelope =>
  failure('daemon_unreachable', `no daemon answers for ${stateDir}: ${why}`, 'start it with `handoff daemon` (or pass the --state-dir it uses)');

/** The CLI's only way to the daemon: loopback HTTP with the port and token from the state dir. */
export async function callDaemon(stateDir: string, options: CallOptions): Promise<Envelope> {
  const info = await readDaemonInfo(stateDir);
  if (info === null) return unreachable(stateDir, 'daemon.json is missing');
  let token: string;
  try {
    token = (await readFile(join(stateDir, TOKEN_FILE), 'utf8')).trim();
  } catch (error) {
    return unreachable(stateDir, `the token file is unreadable (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const search = options.query ? `?${new URLSearchParams(options.query).toString()}` : '';
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: info.port,
        method: options.method,
        path: `${options.path}${search}`,
        headers: {
          host: `127.0.0.1:${info.port}`,
          authorization: `Bearer ${token}`,
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
        timeout: options.timeoutMs ?? 15_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Envelope);
          } catch {
            resolve(unreachable(stateDir, `port ${info.port} answered with something that is not the handoff API`));
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${options.timeoutMs ?? 15_000} ms`)));
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve(unreachable(stateDir, error.code === 'ECONNREFUSED' ? `nothing listens on port ${info.port} (daemon pid ${info.pid} is gone?)` : error.message)),
    );
    req.end(payload);
  });
}
