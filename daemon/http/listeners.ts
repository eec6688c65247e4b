import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../logger.js';
import { answerClientError } from './errors.js';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * The connection limits of one listener. Every number is deliberate; docs/http-api.md ("Limits")
 * states them with the reasons.
 */
export interface ListenerLimits {
  /** Open connections at once; one more is accepted and closed at once, so it costs no descriptor. */
  readonly maxConnections: number;
  /** From the first byte of a connection to the end of the request headers. */
  readonly headersTimeoutMs: number;
  /** From the first byte to the end of the request body. */
  readonly requestTimeoutMs: number;
  /** How often node looks for connections past the two timeouts above (its default, 30 s, lets a stall live 30 s longer). */
  readonly checkIntervalMs: number;
  /** An idle kept-alive connection between two requests. */
  readonly keepAliveTimeoutMs: number;
}

/**
 * The loopback port serves the browser dashboard (a browser opens up to 6 connections per origin, one
 * more per live tab) and scripts of the documented API; any local user can connect to it. Every client
 * there is 127.0.0.1, so a per-client cap would be the same as this overall one.
 */
export const TCP_LIMITS: ListenerLimits = {
  maxConnections: 128,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  checkIntervalMs: 2_000,
  keepAliveTimeoutMs: 5_000,
};

/**
 * The socket in the 0700 state dir serves the owner's CLI and hooks only: every agent session runs a
 * hook per tool call, each one short connection. Its own budget is what keeps `handoff status`
 * answering while the loopback port is flooded.
 */
export const SOCKET_LIMITS: ListenerLimits = { ...TCP_LIMITS, maxConnections: 512 };

/** How often an accept failure (EMFILE, ENFILE) is logged while it lasts. */
const ERROR_LOG_INTERVAL_MS = 10_000;

export interface Listeners {
  /** The loopback TCP server; fastify listens on it (serverFactory). */
  readonly tcp: Server;
  /** The Unix socket server, listened on by daemon/http/local-socket.ts. */
  readonly local: Server;
  /** Whether a request arrived over the local socket (only the owner can reach it). */
  isLocal(socket: Socket): boolean;
}

/**
 * One fastify handler behind two node servers with the same limits, each refusing what is over them
 * instead of dying: an accept that fails for lack of descriptors is an 'error' event on the server,
 * which node turns into an uncaught exception (a crash) when nobody listens for it.
 */
export function createListeners(handler: Handler, log: Logger): Listeners {
  const localSockets = new WeakSet<Socket>();
  const tcp = createLimitedServer(handler, TCP_LIMITS, log.child({ listener: 'tcp' }));
  const local = createLimitedServer(handler, SOCKET_LIMITS, log.child({ listener: 'socket' }));
  local.on('connection', (socket: Socket) => localSockets.add(socket));
  // fastify installs its clientError handler on the server it listens on; the socket needs the same answers.
  local.on('clientError', answerClientError);
  return { tcp, local, isLocal: (socket) => localSockets.has(socket) };
}

function createLimitedServer(handler: Handler, limits: ListenerLimits, log: Logger): Server {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
    },
    handler,
  );
  server.maxConnections = limits.maxConnections;
  let lastLogged = 0;
  let dropped = 0;
  server.on('drop', () => {
    dropped += 1;
    const now = performance.now();
    if (now - lastLogged < ERROR_LOG_INTERVAL_MS) return;
    lastLogged = now;
    log.warn({ dropped, maxConnections: limits.maxConnections }, 'connections over the limit were closed at once');
    dropped = 0;
  });
  let lastError = 0;
  server.on('error', (error: NodeJS.ErrnoException) => {
    // Before listening this is a bind error, which whoever called listen() reports. After it, only an
    // accept fails here: libuv has already closed that connection and the server keeps listening.
    if (!server.listening) return;
    const now = performance.now();
    if (now - lastError < ERROR_LOG_INTERVAL_MS) return;
    lastError = now;
    log.error({ err: error, code: error.code }, 'could not accept a connection; it was refused and the daemon keeps serving');
  });
  return server;
}
