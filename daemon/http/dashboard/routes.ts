import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { failure, success } from '../../../protocol/index.js';
import { DashboardCycleQuerySchema, DashboardLoginQuerySchema } from '../../../schemas/dashboard.schema.js';
import { ownPackage } from '../../package-root.js';
import { sendEnvelope } from '../reply.js';
import type { DashboardService } from './dashboard-service.js';
import type { LiveStreams } from './live.js';
import type { DashboardSessions } from './session.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Set on the dashboard's browser routes: they authenticate by the session cookie (`session`) or
     * by a one-time ticket (`login`) instead of the bearer token, under the Origin rule of session.ts.
     */
    dashboard?: 'session' | 'login';
  }
}

/** Headers of every dashboard answer: nothing loads from elsewhere, nothing frames it, nothing caches it. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'cache-control': 'no-store',
};

/** The login's answer: the dashboard, reached from this origin so the new session cookie goes along (no favicon fetch: it would be refused). */
const ONWARD_PAGE =
  '<!DOCTYPE html><html><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=/dashboard/"><link rel="icon" href="data:,"><title>session-handoff</title></head><body><a href="/dashboard/">Open the dashboard</a></body></html>\n';

const ASSETS: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/** The page's files are tsc's output in the install (the bundle that runs this code holds no files). */
const inDist = (path: string): URL => pathToFileURL(join(ownPackage().root, 'dist', path));
/** Copied into dist/ by the build (scripts/copy-assets.mjs). */
const ASSET_DIR = inDist('daemon/http/dashboard/assets/');
/**
 * The compiled core modules the page imports, so it words times and orders workspaces as the CLI
 * does. Each has only type imports (test/unit/dashboard/page-modules.test.ts checks it).
 */
export const PAGE_MODULES: Readonly<Record<string, URL>> = {
  'time-words.js': inDist('protocol/time-words.js'),
  'urgency.js': inDist('protocol/urgency.js'),
  'way-out.js': inDist('protocol/way-out.js'),
};

export interface DashboardRouteDeps {
  readonly service: DashboardService;
  readonly sessions: DashboardSessions;
  readonly live: LiveStreams;
  /** A new stream gets the whole picture first, then one `workspace` event per change. */
  readonly onStream: (send: (event: string, data: unknown) => void) => Promise<void>;
}

function withPageHeaders(reply: FastifyReply): FastifyReply {
  return reply.headers(PAGE_HEADERS);
}

export function dashboardRoutes(server: FastifyInstance, deps: DashboardRouteDeps): void {
  const { service, sessions, live } = deps;
  // Queries are typed by their schemas, as in the /v1 table (types only: the precompiled validators check them).
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const cache = new Map<string, Buffer>();
  const asset = async (name: string, url = new URL(name, ASSET_DIR)): Promise<Buffer> => {
    let bytes = cache.get(url.href);
    if (bytes === undefined) {
      bytes = await readFile(url);
      cache.set(url.href, bytes);
    }
    return bytes;
  };

  // The browser side (session cookie; the Origin rule of session.ts). Its JSON API side (`POST
  // /v1/dashboard/link`, `GET /v1/workspaces`) is in the /v1 table (daemon/http/routes/v1-routes.ts).
  app.get('/dashboard/login', { schema: { querystring: DashboardLoginQuerySchema }, config: { dashboard: 'login' } }, async (request, reply) => {
    const session = sessions.redeem(request.query.ticket);
    if (session === null) {
      return withPageHeaders(reply)
        .code(401)
        .send(failure('unauthorized', 'this dashboard link was used already or has expired', 'run `handoff open` for a fresh one-time link'));
    }
    // On to a URL without the ticket by a page of this origin, not a 303: the login comes from the
    // redirect file (file://), and a redirect would carry that cross-site start (no SameSite=Strict cookie).
    return withPageHeaders(reply)
      .header('set-cookie', sessions.setCookie(session.id, session.maxAgeSeconds))
      .type(ASSETS['index.html'] ?? 'text/html')
      .send(ONWARD_PAGE);
  });
  app.get('/dashboard', { config: { dashboard: 'session' } }, async (_request, reply) => withPageHeaders(reply).redirect('/dashboard/', 308));
  app.get('/dashboard/', { config: { dashboard: 'session' } }, async (_request, reply) =>
    withPageHeaders(reply)
      .type(ASSETS['index.html'] ?? 'text/html')
      .send(await asset('index.html')),
  );
  for (const name of ['app.js', 'app.css']) {
    app.get(`/dashboard/${name}`, { config: { dashboard: 'session' } }, async (_request, reply) =>
      withPageHeaders(reply)
        .type(ASSETS[name] ?? 'text/plain')
        .send(await asset(name)),
    );
  }
  for (const [name, url] of Object.entries(PAGE_MODULES)) {
    app.get(`/dashboard/lib/${name}`, { config: { dashboard: 'session' } }, async (_request, reply) =>
      withPageHeaders(reply)
        .type(ASSETS['app.js'] ?? 'text/javascript')
        .send(await asset(name, url)),
    );
  }
  app.get('/dashboard/api/overview', { config: { dashboard: 'session' } }, async (_request, reply) =>
    sendEnvelope(withPageHeaders(reply), success('workspaces', await service.overview())),
  );
  app.get('/dashboard/api/cycle', { schema: { querystring: DashboardCycleQuerySchema }, config: { dashboard: 'session' } }, async (request, reply) =>
    sendEnvelope(withPageHeaders(reply), await service.cycle(request.query.workspace, request.query.cycle)),
  );
  app.get('/dashboard/events', { config: { dashboard: 'session' } }, async (request, reply) => {
    reply.hijack();
    const response = reply.raw;
    response.writeHead(200, { ...PAGE_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
    // Reconnect quickly after a daemon restart; the session cookie is then gone and the page says so.
    response.write('retry: 2000\n\n');
    live.add(response);
    request.raw.on('close', () => response.end());
    await deps.onStream((event, data) => live.send(response, event, data));
  });
}
