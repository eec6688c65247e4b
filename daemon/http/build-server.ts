import type { Server } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type RouteOptions } from 'fastify';
import type { AgentContextService } from '../agent-context/index.js';
import type { IngestService } from '../ingest/index.js';
import { systemClock } from '../clock.js';
import type { Logger } from '../logger.js';
import { createOperations } from '../operations/index.js';
import type { Service } from '../service.js';
import type { PruneService } from '../prune/index.js';
import type { TakeoverService } from '../takeover/index.js';
import { precompiled } from '../precompiled.js';
import type { Dashboard } from './dashboard/index.js';
import { answerClientError, registerErrorHandling } from './errors.js';
import { createListeners, type Listeners } from './listeners.js';
import { closeLocalSocket } from './local-socket.js';
import { V1_PREFIX, v1Plugin, v1Routes } from './routes/v1-routes.js';
import { registerSecurity } from './security.js';

export interface ServerDeps {
  readonly service: Service;
  readonly takeover: TakeoverService;
  readonly prune: PruneService;
  readonly ingest: IngestService;
  readonly token: string;
  readonly port: () => number;
  readonly logger: Logger;
  readonly bodyLimit: number;
  /** The live dashboard (daemon/http/dashboard/): its routes and its browser session rule. */
  readonly dashboard?: Dashboard;
  /** What each stage asks of an agent session (daemon/agent-context/), for the agent hooks. */
  readonly agentContext?: AgentContextService;
  /** Told of every route as it is added (the /v1 table once the server gets ready): the OpenAPI generator reads the schemas from here. */
  readonly onRoute?: (route: RouteOptions) => void;
  /** The pid `POST /v1/hello` vouches for; this process by default. */
  readonly pid?: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The second listener: the same routes over the Unix socket in the state dir, for the CLI and the
     * hooks. The composition root makes it listen (daemon/http/local-socket.ts); close() closes it.
     */
    readonly localSocket: Server;
  }
}

/** Builds the API without listening: tests use `inject()`, only the composition root binds. */
export function buildServer(deps: ServerDeps): FastifyInstance {
  let listeners: Listeners | undefined;
  const listenersOf = (): Listeners => {
    if (listeners === undefined) throw new Error('fastify built no server');
    return listeners;
  };
  const app = Fastify({
    // Both node servers are ours, so every limit is set in one place (listeners.ts) for both.
    serverFactory: (handler) => {
      listeners = createListeners(handler, deps.logger.child({ module: 'http' }));
      return listeners.tcp;
    },
    // pino's Logger is a FastifyBaseLogger; the cast keeps fastify's default instance type.
    loggerInstance: deps.logger.child({ module: 'http' }) as FastifyBaseLogger,
    bodyLimit: deps.bodyLimit,
    // One line per request would drown the log: the status-line hook posts after every message.
    logController: new LogController({ disableRequestLogging: true }),
    // With request logging off, fastify's pino child per request (for a request id binding) was pure
    // cost, ~1.2 µs and 350 bytes each: the one line a request writes itself (a 500, errors.ts) names it.
    childLoggerFactory: (logger) => logger,
    return503OnClosing: true,
    // A client that stalls mid-body must not hold a shutdown hostage.
    forceCloseConnections: true,
    // What node's parser refuses (broken framing, oversized headers) is answered with an Envelope too.
    clientErrorHandler: answerClientError,
    // Route schemas are compiled at build time (scripts/emit-validators.mjs): fastify's own ajv and
    // fast-json-stringify compilers are never built, and never loaded. No route declares a response
    // schema, so asking for a serializer is a bug, said at start-up.
    schemaController: {
      compilersFactory: {
        buildValidator:
          () =>
          ({ schema }) =>
            precompiled(schema),
        buildSerializer:
          () =>
          ({ url }) => {
            throw new Error(`${url}: response schemas are not used; replies are serialized with JSON.stringify`);
          },
      },
    },
  });
  // JSON only: fastify would otherwise hand a text/plain body to the schema as a string.
  app.removeContentTypeParser('text/plain');
  if (deps.onRoute !== undefined) app.addHook('onRoute', deps.onRoute);
  registerErrorHandling(app);
  const { local, isLocal } = listenersOf();
  app.decorate('localSocket', local);
  app.addHook('preClose', async () => closeLocalSocket(local));
  registerSecurity(app, {
    token: deps.token,
    port: deps.port,
    browserGate: deps.dashboard?.gate,
    isLocal: (request) => isLocal(request.raw.socket),
  });
  // Registered when the server gets ready (listen, inject or ready()), under the hooks added above.
  void app.register(
    v1Plugin(
      v1Routes({
        service: deps.service,
        takeover: deps.takeover,
        prune: deps.prune,
        ingest: deps.ingest,
        // Elapsed times shown to a person following a request: the wall clock is what they see.
        operations: createOperations(systemClock),
        agentContext: deps.agentContext,
        dashboard: deps.dashboard,
        hello: { token: deps.token, port: deps.port, pid: deps.pid ?? process.pid },
      }),
    ),
    { prefix: V1_PREFIX },
  );
  deps.dashboard?.register(app);
  return app;
}
