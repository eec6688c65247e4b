import { request } from 'node:http';
import { readDaemonAddress, type DaemonAddress } from './daemon-address.js';

/** The Envelope as a hook reads it: hooks load no protocol code, so only its outline is typed here. */
export interface LeanEnvelope {
  readonly code: string;
  readonly data: Record<string, unknown> | null;
  readonly error?: { readonly message: string; readonly hint: string };
}

export type DaemonAnswer =
  | { readonly kind: 'answer'; readonly envelope: LeanEnvelope }
  | { readonly kind: 'down'; readonly reason: string }
  | { readonly kind: 'timeout' };

export interface LeanRequest {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: unknown;
}

const down = (reason: string): DaemonAnswer => ({ kind: 'down', reason });

/**
 * One call to the daemon within `deadlineMs` from start to answer, for hooks that an agent waits on.
 * Never throws: a missing, dead or slow daemon is an answer of its own kind.
 */
export async function askDaemon(stateDir: string, call: LeanRequest, deadlineMs: number): Promise<DaemonAnswer> {
  let address: DaemonAddress;
  try {
    address = readDaemonAddress(stateDir);
  } catch (error) {
    return down((error as Error).message);
  }
  const { port, token } = address;
  const payload = call.body === undefined ? undefined : JSON.stringify(call.body);
  return new Promise((resolve) => {
    let timedOut = false;
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: call.method,
        path: call.path,
        // No keep-alive pool: an idle pooled socket would hold the hook process open after its answer.
        agent: false,
        headers: {
          host: `127.0.0.1:${port}`,
          authorization: `Bearer ${token}`,
          connection: 'close',
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          clearTimeout(timer);
          try {
            resolve({ kind: 'answer', envelope: JSON.parse(Buffer.concat(chunks).toString('utf8')) as LeanEnvelope });
          } catch (error) {
            resolve(down(`port ${port} did not answer with the handoff API (${(error as Error).message})`));
          }
        });
      },
    );
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy();
    }, deadlineMs);
    req.on('error', (error) => {
      clearTimeout(timer);
      resolve(timedOut ? { kind: 'timeout' } : down(error.message));
    });
    req.end(payload);
  });
}
