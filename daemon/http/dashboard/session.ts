import { createHash, randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { HandoffError } from '../../../protocol/index.js';
import type { Clock, Monotonic } from '../../clock.js';

/**
 * The dashboard's own authentication. A browser cannot send the bearer token, so:
 * 1. `handoff open` (holding the token) asks `POST /v1/dashboard/link` for a one-time ticket;
 * 2. the browser opens `/dashboard/login?ticket=…`: the ticket is spent (once, within TICKET_TTL) and
 *    the answer sets an http-only, SameSite=Strict session cookie scoped to `/dashboard`;
 * 3. every other dashboard request (page, assets, data, SSE) must carry that cookie.
 * Only the dashboard's GET routes accept the cookie; the JSON API under /v1/ never does.
 */

export const TICKET_TTL_MS = 60_000;
export const SESSION_TTL_MS = 12 * 3600_000;
const MAX_TICKETS = 16;
const MAX_SESSIONS = 32;

/** Per port, so that two daemons (two state dirs) on one machine do not overwrite each other's cookie. */
export const cookieName = (port: number): string => `handoff_dashboard_${port}`;

const digest = (secret: string): string => createHash('sha256').update(secret).digest('hex');
const secret = (): string => randomBytes(32).toString('base64url');

/** Which `Sec-Fetch-Site` values a dashboard request may carry: typed or opened by the user, or the page itself. */
const FETCH_SITES_ALLOWED: ReadonlySet<string> = new Set(['same-origin', 'none']);

export interface SessionStoreOptions {
  /** Only for the expiry a person reads. */
  readonly clock: Clock;
  /** Every expiry itself: a wall clock set back must not keep a ticket or a session alive longer. */
  readonly monotonic: Monotonic;
  readonly port: () => number;
}

/** Tickets and sessions live in memory only: a daemon restart signs every browser out. */
export class DashboardSessions {
  // Keyed by the sha256 of the secret, so a lookup's timing says nothing about the secret itself.
  private readonly tickets = new Map<string, number>();
  private readonly sessions = new Map<string, number>();

  constructor(private readonly options: SessionStoreOptions) {}

  /** A one-time link for `handoff open`. */
  issueLink(): { url: string; expires_at: string } {
    const now = this.options.monotonic.now();
    this.prune(now);
    const ticket = secret();
    this.tickets.set(digest(ticket), now + TICKET_TTL_MS);
    while (this.tickets.size > MAX_TICKETS) this.tickets.delete(this.tickets.keys().next().value as string);
    const url = `http://127.0.0.1:${this.options.port()}/dashboard/login?ticket=${ticket}`;
    return { url, expires_at: new Date(this.options.clock.now() + TICKET_TTL_MS).toISOString() };
  }

  /** Spends a ticket: a new session id when it was valid, else null. A ticket works once. */
  redeem(ticket: string): { id: string; maxAgeSeconds: number } | null {
    const now = this.options.monotonic.now();
    this.prune(now);
    const key = digest(ticket);
    const expires = this.tickets.get(key);
    this.tickets.delete(key);
    if (expires === undefined || expires <= now) return null;
    const id = secret();
    this.sessions.set(digest(id), now + SESSION_TTL_MS);
    while (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string);
    return { id, maxAgeSeconds: SESSION_TTL_MS / 1000 };
  }

  isValid(id: string): boolean {
    const expires = this.sessions.get(digest(id));
    return expires !== undefined && expires > this.options.monotonic.now();
  }

  setCookie(id: string, maxAgeSeconds: number): string {
    return `${cookieName(this.options.port())}=${id}; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}`;
  }

  /**
   * The browser rule of every dashboard route (the Host allow-list has already run):
   * - `Origin`, when present, must be exactly `http://127.0.0.1:PORT` — the page's own origin;
   * - `Sec-Fetch-Site`, when present, must be `same-origin` or `none`: a page on another port of
   *   127.0.0.1 is *same-site* (ports do not count) and would get a SameSite=Strict cookie sent along;
   * - then the session cookie, unless the route is the ticket login itself.
   */
  gate(request: FastifyRequest, needsSession: boolean): void {
    const ownOrigin = `http://127.0.0.1:${this.options.port()}`;
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== ownOrigin) {
      throw new HandoffError(
        'forbidden_origin',
        `Origin '${String(origin).slice(0, 100)}' is not the dashboard's own`,
        `open the dashboard through \`handoff open\` (${ownOrigin}/dashboard/)`,
      );
    }
    const site = request.headers['sec-fetch-site'];
    // The ticket login is opened from `handoff open`'s redirect file (a file:// page: cross-site to the
    // browser); the ticket itself is the credential there, and a stolen one is what the file prevents.
    if (typeof site === 'string' && needsSession && !FETCH_SITES_ALLOWED.has(site)) {
      throw new HandoffError(
        'forbidden_origin',
        `a ${site} request was refused: only the dashboard's own pages may call it`,
        'open the dashboard through `handoff open`',
      );
    }
    if (!needsSession) return;
    const id = readCookie(request.headers.cookie, cookieName(this.options.port()));
    if (id === null || !this.isValid(id)) {
      throw new HandoffError(
        'unauthorized',
        id === null ? 'no dashboard session cookie' : 'the dashboard session is unknown or expired',
        'run `handoff open` for a fresh one-time link',
      );
    }
  }

  private prune(now: number): void {
    for (const [key, expires] of this.tickets) if (expires <= now) this.tickets.delete(key);
    for (const [key, expires] of this.sessions) if (expires <= now) this.sessions.delete(key);
  }
}

/** The value of one cookie, or null; a cookie header with it twice is refused (null) rather than guessed. */
export function readCookie(header: string | undefined, name: string): string | null {
  if (header === undefined) return null;
  const values = header
    .split(';')
    .map((part) => part.trim())
    .filter((part) => part.startsWith(`${name}=`))
    .map((part) => part.slice(name.length + 1));
  return values.length === 1 && /^[A-Za-z0-9_-]{20,100}$/.test(values[0] ?? '') ? (values[0] ?? null) : null;
}
