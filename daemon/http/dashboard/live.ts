import type { ServerResponse } from 'node:http';

/**
 * Server-sent events to every open dashboard. Each message is one named event with a JSON body; a
 * client that cannot take more (a full socket buffer) is dropped, and its EventSource reconnects.
 */
export class LiveStreams {
  private readonly clients = new Set<ServerResponse>();

  get size(): number {
    return this.clients.size;
  }

  add(response: ServerResponse): void {
    this.clients.add(response);
    response.on('close', () => this.clients.delete(response));
  }

  send(response: ServerResponse, event: string, data: unknown): void {
    if (response.writableEnded || response.destroyed) {
      this.clients.delete(response);
      return;
    }
    const ok = response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    if (!ok && response.writableLength > 4 * 1024 * 1024) {
      this.clients.delete(response);
      response.destroy();
    }
  }

  broadcast(event: string, data: unknown): void {
    for (const response of this.clients) this.send(response, event, data);
  }

  /** A comment line: keeps idle proxies and the browser from timing the stream out. */
  ping(): void {
    for (const response of this.clients) if (!response.writableEnded) response.write(': ping\n\n');
  }

  closeAll(): void {
    for (const response of this.clients) response.end();
    this.clients.clear();
  }
}
