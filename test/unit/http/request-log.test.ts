import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { buildServer } from '../../../daemon/http/build-server.js';

const TOKEN = 'b'.repeat(64);
const unused = {} as never;

/** A server whose signals route fails the way a bug would, logging to lines the test reads back. */
function failingServer() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const service = { signal: () => Promise.reject(new Error('a bug')) } as never;
  const app = buildServer({
    service,
    takeover: unused,
    prune: unused,
    ingest: unused,
    token: TOKEN,
    port: () => 0,
    logger: pino(destination),
    bodyLimit: 4096,
  });
  return { app, lines };
}

describe('what a request writes to the log', () => {
  const body = { repo: '/r', source: 'claude-statusline', metric: 'five_hour', used_percent: 42 };
  const headers = { host: '127.0.0.1:0', authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

  it('a request that fails with a 500 writes one line naming its request id and the error', async () => {
    const { app, lines } = failingServer();
    const response = await app.inject({ method: 'POST', url: '/v1/signals', headers, payload: body });
    expect([response.statusCode, response.json()]).toEqual([500, expect.objectContaining({ code: 'internal_error' })]);
    const failed = lines.filter((line) => line['msg'] === 'request failed');
    expect(failed).toEqual([
      expect.objectContaining({ module: 'http', reqId: expect.stringMatching(/\S/), err: expect.objectContaining({ message: 'a bug' }) }),
    ]);
    await app.close();
  });

  it('a refused request writes nothing (request logging is off)', async () => {
    const { app, lines } = failingServer();
    const refused = await app.inject({ method: 'POST', url: '/v1/signals', headers: { ...headers, authorization: 'Bearer nope' }, payload: body });
    expect(refused.statusCode).toBe(401);
    expect(lines).toEqual([]);
    await app.close();
  });
});
