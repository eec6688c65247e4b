import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  /** The parsed JSON body, or the raw text when it is not JSON. */
  readonly body: unknown;
}

export interface MockProvider {
  /** `http://127.0.0.1:<port>`: the only address the agents are given. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Every recorded body as text, for "did this notice reach the model". */
  bodiesText(): string;
  close(): Promise<void>;
}

export type Handler = (request: RecordedRequest, res: ServerResponse) => void;

/**
 * A provider stand-in on 127.0.0.1 that records every request body. Agents send telemetry-like
 * side requests too (model lists, token counts): the handler answers those with what a provider would.
 */
export async function startMock(handle: Handler): Promise<MockProvider> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text === '' ? null : JSON.parse(text);
      } catch {
        // Not JSON (a form, a probe): kept as text, so a test can still read it.
      }
      const recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      handle(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    bodiesText: () => requests.map((r) => JSON.stringify(r.body)).join('\n'),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Server-sent events: `event:` lines only when the provider names its events (Anthropic, OpenAI Responses). */
export function sse(res: ServerResponse, headers: Record<string, string>, events: readonly { event?: string; data: unknown }[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
  for (const { event, data } of events) {
    res.write(`${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  }
  res.end();
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
