import { connect } from 'node:net';
import { readDaemonAddress, type DaemonAddress } from './daemon-address.js';

/** The Envelope as a hook reads it: hooks load no protocol code, so only its outline is typed here. */
export interface LeanEnvelope {
  readonly code: string;
  readonly data: Record<string, unknown> | null;
  readonly error?: { readonly message: string; readonly hint: string };
}

export type DaemonAnswer =
  { readonly kind: 'answer'; readonly envelope: LeanEnvelope } | { readonly kind: 'down'; readonly reason: string } | { readonly kind: 'timeout' };

export interface LeanRequest {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: unknown;
}

const down = (reason: string): DaemonAnswer => ({ kind: 'down', reason });

/**
 * One call to the daemon within `deadlineMs` from start to answer, for hooks that an agent waits on,
 * over the daemon's Unix socket (never the loopback port, which anyone may hold once the daemon is
 * gone). Never throws: a missing, dead or slow daemon is an answer of its own kind.
 */
export async function askDaemon(stateDir: string, call: LeanRequest, deadlineMs: number): Promise<DaemonAnswer> {
  let address: DaemonAddress;
  try {
    address = readDaemonAddress(stateDir);
  } catch (error) {
    return down((error as Error).message);
  }
  const { socketPath, token } = address;
  const body = call.body === undefined ? '' : JSON.stringify(call.body);
  const head = [
    `${call.method} ${call.path} HTTP/1.1`,
    'host: localhost',
    `authorization: Bearer ${token}`,
    // The daemon closes after answering, so the end of the stream is the end of the answer.
    'connection: close',
    ...(body === '' ? [] : ['content-type: application/json', `content-length: ${Buffer.byteLength(body)}`]),
  ];
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect({ path: socketPath });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ kind: 'timeout' });
    }, deadlineMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error) => {
      clearTimeout(timer);
      resolve(down(error.message));
    });
    socket.on('end', () => {
      clearTimeout(timer);
      const envelope = envelopeOf(Buffer.concat(chunks).toString('utf8'));
      resolve(envelope === null ? down(`${socketPath} did not answer with the handoff API`) : { kind: 'answer', envelope });
    });
    socket.write(`${head.join('\r\n')}\r\n\r\n${body}`);
  });
}

/**
 * The Envelope in an HTTP/1.1 answer. A raw socket rather than node:http because loading and first
 * use of the http client cost the status line ~7 ms; the daemon (fastify) answers JSON with a
 * content-length and closes, so the body is everything after the head.
 */
export function envelopeOf(response: string): LeanEnvelope | null {
  const split = response.indexOf('\r\n\r\n');
  if (!/^HTTP\/1\.[01] \d{3} /.test(response) || split < 0) return null;
  if (/\r\ntransfer-encoding:\s*chunked/i.test(response.slice(0, split))) return null;
  try {
    const value: unknown = JSON.parse(response.slice(split + 4));
    return typeof value === 'object' && value !== null && typeof (value as { code?: unknown }).code === 'string' ? (value as LeanEnvelope) : null;
  } catch (error) {
    if (error instanceof SyntaxError) return null;
    throw error;
  }
}
