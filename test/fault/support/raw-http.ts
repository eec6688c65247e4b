import { connect } from 'node:net';

export interface RawAnswer {
  /** null: the server closed the connection without an answer (or the client gave up). */
  readonly status: number | null;
  readonly body: string;
  readonly timedOut: boolean;
}

/**
 * Sends exact bytes over a fresh loopback TCP connection and reads until the server closes it, so a
 * request can be malformed in any way an HTTP library would refuse to produce.
 */
export function sendRaw(port: number, bytes: Buffer, timeoutMs = 5_000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (timedOut: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      let text = Buffer.concat(chunks).toString('latin1');
      // Interim answers (100 Continue) come first; the final one counts.
      while (/^HTTP\/1\.[01] 1\d\d /.test(text) && text.includes('\r\n\r\n')) text = text.slice(text.indexOf('\r\n\r\n') + 4);
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      const split = text.indexOf('\r\n\r\n');
      resolve({ status: match ? Number(match[1]) : null, body: split === -1 ? '' : Buffer.from(text.slice(split + 4), 'latin1').toString('utf8'), timedOut });
    };
    const timer = setTimeout(() => finish(true), timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => finish(false));
    socket.on('close', () => finish(false));
    socket.on('error', () => finish(false));
    socket.write(bytes);
  });
}

export interface RawRequest {
  readonly method: string;
  readonly target: string;
  /** In order; duplicates allowed. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer;
}

export function encodeRequest(request: RawRequest): Buffer {
  const head = [`${request.method} ${request.target} HTTP/1.1`, ...request.headers.map(([name, value]) => `${name}: ${value}`), '', ''].join('\r\n');
  return Buffer.concat([Buffer.from(head, 'latin1'), request.body]);
}
