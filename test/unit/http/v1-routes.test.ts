import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { buildServer } from '../../../daemon/http/build-server.js';
import { collectRoutes, openApiDocument } from '../../../daemon/http/openapi.js';
import { V1_PREFIX, v1Routes } from '../../../daemon/http/routes/v1-routes.js';
import { servedV1Routes } from '../../support/route-table.js';

// No handler runs in these tests: every request is refused or answered before a service is reached.
const unused = {} as never;
const TOKEN = 'a'.repeat(64);
const hello = { token: TOKEN, port: () => 0, pid: 1 };
const table = servedV1Routes(hello);
const keyOf = (method: string, url: string) => `${method.toUpperCase()} ${url.replace(/:([A-Za-z_]+)/g, '{$1}')}`;

describe('the /v1 route table', () => {
  it('has every route exactly once, each url relative to the one prefix', () => {
    const keys = table.map((row) => keyOf(row.method, `${V1_PREFIX}${row.url}`));
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toHaveLength(36);
    for (const row of table) expect(row.url, `${row.method} ${row.url}`).not.toMatch(/^\/v1\//);
  });

  it('is what the server registers and what the OpenAPI document lists under /v1', async () => {
    const fromTable = table.map((row) => keyOf(row.method, `${V1_PREFIX}${row.url}`));
    const registered = (await collectRoutes())
      .filter((route) => route.method !== 'HEAD' && route.url.startsWith(`${V1_PREFIX}/`))
      .map((route) => keyOf(String(route.method), route.url));
    expect(registered.sort()).toEqual([...fromTable].sort());

    const document = openApiDocument(await collectRoutes()) as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(document.paths)
      .filter(([path]) => path.startsWith(`${V1_PREFIX}/`))
      .flatMap(([path, operations]) => Object.keys(operations).map((method) => keyOf(method, path)));
    expect(documented.sort()).toEqual([...fromTable].sort());
  });

  it('leaves out the routes of an agent context service or a dashboard the daemon was built without', () => {
    const without = v1Routes({ service: unused, takeover: unused, prune: unused, ingest: unused, operations: unused, hello });
    const kept = new Set(without.map((row) => `${row.method} ${row.url}`));
    expect(table.map((row) => `${row.method} ${row.url}`).filter((key) => !kept.has(key))).toEqual([
      'POST /agent-context',
      'POST /dashboard/link',
      'GET /workspaces',
    ]);
  });
});

describe('inside the /v1 plugin, the hooks and validators of the root hold', () => {
  const app = buildServer({
    service: unused,
    takeover: unused,
    prune: unused,
    ingest: unused,
    token: TOKEN,
    port: () => 0,
    logger: pino({ enabled: false }),
    bodyLimit: 1024,
  });
  const host = { host: '127.0.0.1:0' };

  it('refuses a foreign Host, an Origin and a missing token before any handler', async () => {
    const foreign = await app.inject({ method: 'GET', url: '/v1/status?repo=/r', headers: { host: 'evil.example:0', authorization: `Bearer ${TOKEN}` } });
    expect([foreign.statusCode, foreign.json()]).toEqual([403, expect.objectContaining({ code: 'forbidden_host' })]);
    const origin = await app.inject({ method: 'GET', url: '/v1/status?repo=/r', headers: { ...host, origin: 'http://127.0.0.1:0' } });
    expect(origin.json()).toMatchObject({ code: 'forbidden_origin' });
    const anonymous = await app.inject({ method: 'GET', url: '/v1/status?repo=/r', headers: host });
    expect([anonymous.statusCode, anonymous.json()]).toEqual([401, expect.objectContaining({ code: 'unauthorized' })]);
  });

  it('validates with the precompiled schema and answers invalid_body as an Envelope', async () => {
    const response = await app.inject({ method: 'GET', url: '/v1/status', headers: { ...host, authorization: `Bearer ${TOKEN}` } });
    expect([response.statusCode, response.json()]).toEqual([400, expect.objectContaining({ code: 'invalid_body' })]);
  });

  it('lets POST /v1/hello through without a token, still under the body limit and the schema', async () => {
    const noBody = await app.inject({ method: 'POST', url: '/v1/hello', headers: { ...host, 'content-type': 'application/json' }, payload: '{}' });
    expect([noBody.statusCode, noBody.json()]).toEqual([400, expect.objectContaining({ code: 'invalid_body' })]);
    const tooLarge = await app.inject({
      method: 'POST',
      url: '/v1/hello',
      headers: { ...host, 'content-type': 'application/json' },
      payload: JSON.stringify({ nonce: 'x'.repeat(2048) }),
    });
    expect([tooLarge.statusCode, tooLarge.json()]).toEqual([413, expect.objectContaining({ code: 'body_too_large' })]);
  });

  it('answers a route that is not in the table with not_found', async () => {
    const response = await app.inject({ method: 'GET', url: '/v1/nope', headers: { ...host, authorization: `Bearer ${TOKEN}` } });
    expect([response.statusCode, response.json()]).toEqual([404, expect.objectContaining({ code: 'not_found' })]);
  });
});
