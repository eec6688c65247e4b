import { hash, timingSafeEqual } from 'node:crypto';
import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from 'fastify';
import { HandoffError } from '../../protocol/index.js';

export interface SecurityOptions {
  readonly token: string;
  /** The bound port; known only after listen, so it is read on each request. */
  readonly port: () => number;
  /**
   * The dashboard's browser routes: returns true when it judged the request by its own rule (a session
   * cookie, an Origin of exactly its own page; daemon/http/dashboard/session.ts), throws to refuse it,
   * false for every other route. Runs after the Host check, which holds for every route.
   */
  readonly browserGate?: ((request: FastifyRequest, config: FastifyContextConfig) => boolean) | undefined;
  /** Whether the request came over the Unix socket in the 0700 state dir (daemon/http/listeners.ts). */
  readonly isLocal?: ((request: FastifyRequest) => boolean) | undefined;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers without the bearer token (only `POST /v1/hello`); Host and Origin still hold. */
    unauthenticated?: boolean;
  }
}

// One-shot: a Hash object per request (create, update, digest) took twice as long (docs/performance/daemon.md).
const digest = (value: string): Buffer => hash('sha256', value, 'buffer');
const digestMatches = (presented: string, expected: Buffer): boolean => timingSafeEqual(digest(presented), expected);

/** Constant time over equal-length digests, so neither length nor prefix of the token leaks. */
export function tokenMatches(presented: string, expected: string): boolean {
  return digestMatches(presented, digest(expected));
}

export function allowedHosts(port: number): ReadonlySet<string> {
  return new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
}

function bearer(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer ([^\s]+)$/i.exec(header.trim());
  return match?.[1] ?? null;
}

/**
 * Runs before any body is read. Host first (DNS rebinding), then Origin (any browser page), then the
 * token: a web page can neither reach the API through a hostile name nor ride a user's session. The
 * dashboard's browser routes replace the last two with the browser gate (own Origin, session cookie).
 * Over the Unix socket the Host check is moot (no browser, no name to rebind) and skipped; the token
 * is still required there, so both transports answer every call alike.
 */
export function registerSecurity(app: FastifyInstance, options: SecurityOptions): void {
  // Per request only the presented token is hashed, and the Host names are built once per port.
  const expected = digest(options.token);
  let hosts = { port: -1, names: new Set<string>() };
  const hostsOf = (port: number): ReadonlySet<string> => {
    if (hosts.port !== port) hosts = { port, names: new Set(allowedHosts(port)) };
    return hosts.names;
  };
  /** Throws the refusal; returns when the request may go on. */
  const check = (request: FastifyRequest): void => {
    const host = (request.headers.host ?? '').toLowerCase();
    if (options.isLocal?.(request) !== true && !hostsOf(options.port()).has(host)) {
      throw new HandoffError(
        'forbidden_host',
        `Host '${host.slice(0, 100)}' is not a loopback name of this daemon`,
        `call http://127.0.0.1:${options.port()}/ directly`,
      );
    }
    // fastify builds `routeOptions` afresh on every read: read once, for the gate and the flag below.
    const { config } = request.routeOptions;
    if (options.browserGate?.(request, config) === true) return;
    if (request.headers.origin !== undefined) {
      throw new HandoffError(
        'forbidden_origin',
        'requests that carry an Origin header are refused',
        'the API is for local tools, not web pages; call it without a browser',
      );
    }
    // A route a client calls before it shows the token (`POST /v1/hello`); Host and Origin still held.
    if (config.unauthenticated === true) return;
    const presented = bearer(request);
    if (presented === null || !digestMatches(presented, expected)) {
      throw new HandoffError(
        'unauthorized',
        presented === null ? 'missing bearer token' : 'wrong bearer token',
        'send `Authorization: Bearer <token>` with the token file of the state dir',
      );
    }
  };
  // Async, though `check` is not: refused synchronously (a `done` hook), a request whose body node
  // reads as a second, pipelined one got both answers on its connection (test/fault/http-fuzz.fault.ts,
  // seed 1033027439); the promise per request is worth less than that.
  app.addHook('onRequest', async (request) => {
    check(request);
  });
}
