import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { collectRoutes, openApiDocument, openApiFiles } from '../../daemon/http/openapi.js';

const committed = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('the HTTP API reference is generated from the routes', () => {
  it('docs/openapi.json and docs/api-reference.md are what the routes say today (else: npm run openapi)', async () => {
    const { json, markdown } = await openApiFiles();
    expect(committed('docs/openapi.json'), 'docs/openapi.json is out of date: run `npm run openapi`').toBe(json);
    expect(committed('docs/api-reference.md'), 'docs/api-reference.md is out of date: run `npm run openapi`').toBe(markdown);
  });

  it('every route is in it, described, with its schemas and its auth', async () => {
    const routes = (await collectRoutes()).filter((r) => r.method !== 'HEAD');
    const document = openApiDocument(routes) as {
      paths: Record<string, Record<string, { summary: string; security: unknown[]; requestBody?: unknown; parameters?: unknown[] }>>;
    };
    const operations = Object.entries(document.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })),
    );
    expect(operations).toHaveLength(routes.length);
    for (const { key, op } of operations) expect(op.summary, key).not.toMatch(/^undocumented/);
    const byKey = new Map(operations.map(({ key, op }) => [key, op]));
    expect(byKey.get('POST /v1/signals')?.requestBody).toMatchObject({
      content: { 'application/json': { schema: { required: expect.arrayContaining(['repo', 'source', 'metric', 'used_percent']) } } },
    });
    expect(byKey.get('POST /v1/ingest/{adapter}')?.parameters).toEqual([expect.objectContaining({ name: 'adapter', in: 'path', required: true })]);
    expect(byKey.get('GET /v1/status')?.security).toEqual([{ bearer: [] }]);
    expect(byKey.get('GET /dashboard/events')?.security).toEqual([{ dashboardSession: [] }]);
    expect(byKey.get('GET /dashboard/login')?.security).toEqual([]);
  });
});
