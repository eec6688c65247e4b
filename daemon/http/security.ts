import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
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
  readonly browserGate?: ((request: FastifyRequest) => boolean) | undefined;
}

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/** Constant time over equal-length digests, so neither length nor prefix of the token leaks. */
export function tokenMatches(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
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
 */
export function registerSecurity(app: FastifyInstance, options: SecurityOptions): void {
  app.addHook('onRequest', async (request) => {
    const host = (request.headers.host ?? '').toLowerCase();
    if (!allowedHosts(options.port()).has(host)) {
      throw new HandoffError('forbidden_host', `Host '${host.slice(0, 100)}' is not a loopback name of this daemon`, `call http://127.0.0.1:${options.port()}/ directly`);
    }
    if (options.browserGate?.(request) === true) return;
    if (request.headers.origin !== undefined) {
      throw new HandoffError('forbidden_origin', 'requests that carry an Origin header are refused', 'the API is for local tools, not web pages; call it without a browser');
    }
    const presented = bearer(request);
    if (presented === null || !tokenMatches(presented, options.token)) {
      throw new HandoffError('unauthorized', presented === null ? 'missing bearer token' : 'wrong bearer token', 'send `Authorization: Bearer <token>` with the token file of the state dir');
    }
  });
}
