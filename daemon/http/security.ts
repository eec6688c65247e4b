import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HandoffError } from '../../protocol/index.js';

export interface SecurityOptions {
  readonly token: string;
  /** The bound port; known only after listen, so it is read on each request. */
  readonly port: () => number;
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
 * token: a web page can neither reach the API through a hostile name nor ride a user's session.
 */
export function registerSecurity(app: FastifyInstance, options: SecurityOptions): void {
  app.addHook('onRequest', async (request) => {
    const host = (request.headers.host ?? '').toLowerCase();
    if (!allowedHosts(options.port()).has(host)) {
      throw new HandoffError('forbidden_host', `Host '${host.slice(0, 100)}' is not a loopback name of this daemon`, `call http://127.0.0.1:${options.port()}/ directly`);
    }
    if (request.headers.origin !== undefined) {
      throw new HandoffError('forbidden_origin', 'requests that carry an Origin header are refused', 'the API is for local tools, not web pages; call it without a browser');
    }
    const presented = bearer(request);
    if (presented === null || !tokenMatches(presented, options.token)) {
      throw new HandoffError('unauthorized', presented === null ? 'missing bearer token' : 'wrong bearer token', 'send `Authorization: Bearer <token>` with the token file of the state dir');
    }
  });
}
