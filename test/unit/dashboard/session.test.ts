import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { cookieName, DashboardSessions, readCookie, SESSION_TTL_MS, TICKET_TTL_MS } from '../../../daemon/http/dashboard/session.js';
import { isHandoffError } from '../../../protocol/index.js';

const PORT = 4711;

function setup() {
  const clock = {
    t: Date.parse('2026-11-29T10:00:00Z'),
    now() {
      return this.t;
    },
  };
  // One fake for both clocks; the step-back test below gives the wall clock a life of its own.
  const sessions = new DashboardSessions({ clock, monotonic: clock, port: () => PORT });
  return { clock, sessions };
}

const request = (headers: Record<string, string>) => ({ headers }) as unknown as FastifyRequest;

function refusal(run: () => void): string | null {
  try {
    run();
    return null;
  } catch (error) {
    if (isHandoffError(error)) return error.code;
    throw error;
  }
}

const ticketOf = (url: string) => new URL(url).searchParams.get('ticket') ?? '';

describe('dashboard tickets and sessions', () => {
  it('a link points at 127.0.0.1 of this port; its ticket works once', () => {
    const { sessions } = setup();
    const { url } = sessions.issueLink();
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${PORT}/dashboard/login\\?ticket=[A-Za-z0-9_-]{43}$`));
    const session = sessions.redeem(ticketOf(url));
    expect(session).not.toBeNull();
    expect(sessions.redeem(ticketOf(url))).toBeNull();
    expect(sessions.isValid(session?.id ?? '')).toBe(true);
  });

  it('a ticket expires after a minute and a session after twelve hours', () => {
    const { clock, sessions } = setup();
    const late = sessions.issueLink();
    clock.t += TICKET_TTL_MS;
    expect(sessions.redeem(ticketOf(late.url))).toBeNull();
    const session = sessions.redeem(ticketOf(sessions.issueLink().url));
    clock.t += SESSION_TTL_MS - 1;
    expect(sessions.isValid(session?.id ?? '')).toBe(true);
    clock.t += 1;
    expect(sessions.isValid(session?.id ?? '')).toBe(false);
  });

  it('a wall clock set back an hour keeps no ticket alive past its minute: expiry runs on the monotonic clock', () => {
    const elapsed = { t: 0, now: () => elapsed.t };
    const wall = { t: Date.parse('2026-11-29T10:00:00Z'), now: () => wall.t };
    const sessions = new DashboardSessions({ clock: wall, monotonic: elapsed, port: () => PORT });
    const link = sessions.issueLink();
    expect(link.expires_at).toBe('2026-11-29T10:01:00.000Z');
    wall.t -= 3600_000;
    elapsed.t += TICKET_TTL_MS;
    expect(sessions.redeem(ticketOf(link.url))).toBeNull();
  });

  it('the cookie is http-only, SameSite=Strict, scoped to /dashboard and named by port', () => {
    const { sessions } = setup();
    expect(sessions.setCookie('abc', 60)).toBe(`handoff_dashboard_${PORT}=abc; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=60`);
  });

  it('the browser rule: own Origin or none, same-origin or user-initiated fetches, then the cookie', () => {
    const { sessions } = setup();
    const session = sessions.redeem(ticketOf(sessions.issueLink().url));
    const cookie = `other=1; ${cookieName(PORT)}=${session?.id ?? ''}`;
    const judge = (headers: Record<string, string>, needsSession = true) => refusal(() => sessions.gate(request(headers), needsSession));
    expect(judge({ cookie })).toBeNull();
    expect(judge({ cookie, origin: `http://127.0.0.1:${PORT}`, 'sec-fetch-site': 'same-origin' })).toBeNull();
    expect(judge({ cookie, 'sec-fetch-site': 'none' })).toBeNull();
    expect(judge({ cookie, origin: 'http://evil.example' })).toBe('forbidden_origin');
    expect(judge({ cookie, origin: `http://localhost:${PORT}` })).toBe('forbidden_origin');
    expect(judge({ cookie, origin: `http://127.0.0.1:${PORT + 1}` })).toBe('forbidden_origin');
    expect(judge({ cookie, origin: 'null' })).toBe('forbidden_origin');
    // Another port of 127.0.0.1 is the same *site*: SameSite=Strict alone would let its requests carry the cookie.
    expect(judge({ cookie, 'sec-fetch-site': 'same-site' })).toBe('forbidden_origin');
    expect(judge({ cookie, 'sec-fetch-site': 'cross-site' })).toBe('forbidden_origin');
    expect(judge({})).toBe('unauthorized');
    expect(judge({ cookie: `${cookieName(PORT)}=${'x'.repeat(43)}` })).toBe('unauthorized');
    expect(judge({ cookie: `${cookieName(PORT + 1)}=${session?.id ?? ''}` })).toBe('unauthorized');
    expect(judge({}, false)).toBeNull();
    expect(judge({ origin: 'http://evil.example' }, false)).toBe('forbidden_origin');
  });

  it('readCookie refuses a doubled or malformed cookie rather than guess', () => {
    expect(readCookie('a=1; handoff_dashboard_1=' + 'b'.repeat(43), 'handoff_dashboard_1')).toBe('b'.repeat(43));
    expect(readCookie(`handoff_dashboard_1=${'b'.repeat(43)}; handoff_dashboard_1=${'c'.repeat(43)}`, 'handoff_dashboard_1')).toBeNull();
    expect(readCookie('handoff_dashboard_1=<script>', 'handoff_dashboard_1')).toBeNull();
    expect(readCookie(undefined, 'handoff_dashboard_1')).toBeNull();
  });
});
