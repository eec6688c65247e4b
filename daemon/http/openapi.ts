import type { RouteOptions } from 'fastify';
import pino from 'pino';
import { byCodeUnits } from '../../protocol/code-unit-order.js';
import { CODES, PROTOCOL_VERSION, type Code } from '../../protocol/index.js';
import { systemClock, systemMonotonic } from '../clock.js';
import { buildServer } from './build-server.js';
import { createDashboard } from './dashboard/index.js';

/**
 * The HTTP API reference, generated from the routes themselves: every route the daemon registers,
 * with the JSON Schema of its query, params and body as fastify validates them. `npm run openapi`
 * writes docs/openapi.json and docs/api-reference.md; a unit test fails when either is out of date.
 */

interface RouteDoc {
  readonly summary: string;
  /** The codes a caller should expect besides the common refusals (see COMMON). */
  readonly codes: readonly Code[];
}

/** Words for each route. A route missing here still appears, with a note to describe it. */
const ROUTES: Readonly<Record<string, RouteDoc>> = {
  'GET /v1/status': {
    summary:
      'State, pressure, readings with age and credibility, warnings, pause, blocked reason, cycle, lease, capsule, daemon; with after_change, a long poll that answers once the workspace changed',
    codes: ['status', 'not_a_repository'],
  },
  'POST /v1/signals': {
    summary: 'Report one reading (a percent read by an agent or provider, or null for unknown)',
    codes: ['reading_recorded', 'reading_not_credible', 'paused_denied'],
  },
  'POST /v1/warnings': { summary: 'Report a provider near-limit warning; NORMAL and PREPARE go to EVACUATE unless paused', codes: ['warning_recorded'] },
  'POST /v1/prepare': { summary: 'Enter PREPARE by hand', codes: ['prepare_entered', 'paused_denied', 'wrong_state'] },
  'POST /v1/now': { summary: 'Evacuate now (wait: false skips the wait for `handoff drained`)', codes: ['evacuation_started', 'paused_denied', 'wrong_state'] },
  'POST /v1/drained': { summary: 'The source agent finished its in-flight atomic step: the drain stops waiting', codes: ['ok', 'wrong_state'] },
  'POST /v1/resume': { summary: 'Run a blocked or interrupted drain again from its first unfinished step', codes: ['ok', 'wrong_state'] },
  'POST /v1/cancel': {
    summary:
      'End a stage, an evacuation (drain or offer) or a return leg (its offer through a remote withdrawn there): recorded as abandoned, refs kept, allowed while paused',
    codes: ['cancelled', 'wrong_state', 'lease_held', 'remote_unreachable', 'remote_refused', 'corrupt_record', 'stale_token'],
  },
  'GET /v1/check': {
    summary: 'Whether an evacuation was interrupted (exit 1) or the last cycle completed (exit 2)',
    codes: ['check_clear', 'resume_needed', 'cycle_completed'],
  },
  'POST /v1/capsule': { summary: "Validate and write the agent's continuation capsule", codes: ['capsule_saved', 'invalid_body'] },
  'GET /v1/capsule': { summary: 'The capsule on disk, or null', codes: ['capsule_shown'] },
  'POST /v1/verify': {
    summary: 'Run the takeover checks without taking the lease',
    codes: ['verified', 'diverged', 'stale', 'ambiguous', 'unknown_cycle', 'corrupt_record', 'wrong_state', 'lease_held', 'remote_unreachable'],
  },
  'POST /v1/accept': {
    summary: 'Verify and take the lease (out leg, or the return leg with return: true)',
    codes: [
      'accepted',
      'diverged',
      'stale',
      'ambiguous',
      'unknown_cycle',
      'corrupt_record',
      'wrong_state',
      'lease_held',
      'paused_denied',
      'checkout_incomplete',
      'remote_unreachable',
      'remote_refused',
      'interrupted',
    ],
  },
  'POST /v1/return': {
    summary: 'The lease holder hands the work back: the return leg drain',
    codes: ['return_started', 'wrong_state', 'stale_token', 'corrupt_record', 'remote_unreachable', 'remote_refused'],
  },
  'POST /v1/close': {
    summary: 'End a one-way cycle',
    codes: ['ok', 'usage_error', 'wrong_state', 'stale_token', 'paused_denied', 'corrupt_record', 'remote_unreachable', 'remote_refused'],
  },
  'GET /v1/cycles': {
    summary: 'The latest 20 cycles on record per workspace (all=true: every one), each with its integrity, and the total',
    codes: ['cycles'],
  },
  'GET /v1/cycles/resolve': {
    summary:
      'The one cycle id a unique start of an id names, among the cycles this daemon knows (as git resolves a short SHA); several: ambiguous, listing them',
    codes: ['cycle_resolved', 'unknown_cycle', 'ambiguous'],
  },
  'GET /v1/cycle': { summary: 'One cycle with every manifest revision and its integrity check', codes: ['cycle', 'unknown_cycle'] },
  'POST /v1/rehearse': {
    summary:
      "Rehearse the evacuation now (`handoff doctor`), from the daemon's own environment: the remote answers, takes the drain's refspecs (dry run) and a probe ref under refs/handoff/rehearsal/ (deleted again at once); in NORMAL or PREPARE only, never while paused. data.way_out: proven, blocked (cause, fix) or unknown",
    codes: ['way_out_rehearsed', 'wrong_state', 'paused_denied', 'not_a_repository'],
  },
  'POST /v1/prune': {
    summary:
      "Delete the finished cycles' handoff branches and refs (never the current unfinished or received cycle, never a checked-out branch; with remote: there too, in one atomic push); dry_run lists and changes nothing",
    codes: ['ok', 'not_a_repository', 'remote_unreachable'],
  },
  'GET /v1/operations': {
    summary:
      'The long requests at work now (accept, verify), each with its phase, elapsed time and whether the lease is moving: what the CLI asks, as its liveness check, while it follows one',
    codes: ['operations'],
  },
  'POST /v1/operations/cancel': {
    summary:
      'Cancel the request named by its `handoff-operation` header, unless its lease is already moving (then it goes on: `committed: true`); an empty list when none is live',
    codes: ['operations'],
  },
  'GET /v1/lease': { summary: 'The lease of a workspace', codes: ['lease_shown'] },
  'POST /v1/lease/acquire': {
    summary: 'Take a free lease; data.token fences every later call',
    codes: ['lease_acquired', 'lease_held', 'paused_denied', 'wrong_state', 'lease_travels', 'corrupt_record', 'remote_unreachable', 'remote_refused'],
  },
  'POST /v1/lease/renew': {
    summary: 'The holder renews its lease',
    codes: ['lease_renewed', 'stale_token', 'corrupt_record', 'remote_unreachable', 'remote_refused'],
  },
  'POST /v1/lease/release': {
    summary: 'The holder releases its lease',
    codes: ['lease_released', 'stale_token', 'lease_travels', 'lease_held', 'corrupt_record', 'remote_unreachable', 'remote_refused'],
  },
  'POST /v1/lease/break': {
    summary: "An operator's recorded override",
    codes: ['lease_broken', 'lease_travels', 'lease_held', 'corrupt_record', 'remote_unreachable', 'remote_refused'],
  },
  'POST /v1/pause': { summary: 'The kill switch on (writes the PAUSE file)', codes: ['paused', 'usage_error', 'wrong_state'] },
  'POST /v1/unpause': { summary: 'The kill switch off (removes the PAUSE file)', codes: ['unpaused', 'usage_error'] },
  'POST /v1/config/reload': {
    summary:
      'Read config.json again (`handoff config set` calls it): the pressure thresholds and profile go through every workspace (a lowered line it is already above moves it; nothing moves back out of EVACUATE or later); data says which changed keys wait for the next start',
    codes: ['ok', 'invalid_config'],
  },
  'POST /v1/agent-context': {
    summary:
      'What the stage asks of one agent session (the agent hooks): a short text to inject once per stage per session, or at SessionStart the pickup of a ready handoff',
    codes: ['agent_context', 'not_a_repository'],
  },
  'POST /v1/ingest/{adapter}': {
    summary: "Feed one raw payload to a telemetry adapter; routed by repo or the payload's cwd",
    codes: ['ingested', 'invalid_body', 'usage_error'],
  },
  'POST /v1/hello': {
    summary:
      'Unauthenticated: proves the answering process holds the token (HMAC-SHA256 of the nonce, port and pid) before a client sends it; see docs/http-api.md',
    codes: ['ok', 'invalid_body'],
  },
  'POST /v1/daemon/stop': { summary: 'Stop the daemon after answering', codes: ['daemon_stopping'] },
  'POST /v1/dashboard/link': { summary: 'A one-time dashboard link (`handoff open`): it works once, within 60 s', codes: ['dashboard_link'] },
  'GET /v1/workspaces': { summary: 'Every workspace the daemon knows: status, plain-words summary, readings timeline, recorded cycles', codes: ['workspaces'] },
  'GET /dashboard/login': {
    summary:
      'Spend a one-time ticket: sets the http-only, SameSite=Strict session cookie and answers a page that moves on to /dashboard/ (a page of this origin, so the cookie goes along)',
    codes: ['unauthorized'],
  },
  'GET /dashboard': { summary: 'Redirects (308) to /dashboard/', codes: [] },
  'GET /dashboard/': { summary: 'The dashboard page (HTML)', codes: [] },
  'GET /dashboard/app.js': { summary: "The dashboard's script", codes: [] },
  'GET /dashboard/app.css': { summary: "The dashboard's style sheet", codes: [] },
  'GET /dashboard/lib/time-words.js': { summary: 'The core module the page words times with (the CLI uses the same)', codes: [] },
  'GET /dashboard/lib/urgency.js': { summary: 'The core module the page orders workspaces with (the CLI uses the same)', codes: [] },
  'GET /dashboard/lib/way-out.js': { summary: 'The core module the page words the way out with (the CLI uses the same)', codes: [] },
  'GET /dashboard/api/overview': { summary: 'What the page shows: every workspace (as GET /v1/workspaces)', codes: ['workspaces'] },
  'GET /dashboard/api/cycle': {
    summary: 'Every HANDOFF.md revision of one cycle, rendered to HTML from an escaped source, with its integrity',
    codes: ['cycle', 'unknown_cycle', 'not_a_repository'],
  },
  'GET /dashboard/events': {
    summary: 'Server-sent events: `overview` (every workspace) on connect and every 20 s, `workspace` (one card) on every change',
    codes: [],
  },
};

/** Refusals any route may answer before its own logic runs; more for routes that validate input or take a body. */
const COMMON: readonly Code[] = ['unauthorized', 'forbidden_host', 'forbidden_origin', 'internal_error'];
const VALIDATED: readonly Code[] = ['invalid_body'];
const WITH_BODY: readonly Code[] = ['malformed_json', 'body_too_large', 'unsupported_media_type'];

/** Every route as the daemon registers it, with its schemas; no handler runs and nothing listens. */
export async function collectRoutes(): Promise<RouteOptions[]> {
  const routes: RouteOptions[] = [];
  const unused = {} as never;
  const logger = pino({ enabled: false });
  const dashboard = createDashboard({
    registry: { observe: () => () => undefined } as never,
    takeover: unused,
    clock: systemClock,
    monotonic: systemMonotonic,
    info: unused,
    port: () => 0,
    log: logger,
  });
  const app = buildServer({
    service: unused,
    takeover: unused,
    prune: unused,
    ingest: unused,
    agentContext: unused,
    token: 'unused',
    port: () => 0,
    logger,
    bodyLimit: 65536,
    dashboard,
    onRoute: (route) => void routes.push(route),
  });
  // The /v1 table is a plugin: its routes exist once the server is ready.
  await app.ready();
  await app.close();
  return routes;
}

type Json = Record<string, unknown>;

/** A TypeBox schema as plain JSON (its symbol keys dropped). */
const plain = (schema: unknown): Json => JSON.parse(JSON.stringify(schema ?? {})) as Json;

function parameters(schema: unknown, where: 'query' | 'path'): Json[] {
  const json = plain(schema);
  const properties = (json['properties'] ?? {}) as Record<string, Json>;
  const required = new Set((json['required'] ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: where, required: where === 'path' || required.has(name), ...(description === undefined ? {} : { description }), schema: rest };
  });
}

const ENVELOPE = {
  type: 'object',
  required: ['code', 'data', 'authority'],
  properties: {
    code: { type: 'string', enum: Object.keys(CODES) },
    data: {},
    authority: { const: 'none' },
    error: { type: 'object', required: ['message', 'hint'], properties: { message: { type: 'string' }, hint: { type: 'string' } } },
  },
};

function responses(codes: readonly Code[], page: boolean, input: { validated: boolean; body: boolean }): Json {
  const byStatus = new Map<number, Code[]>();
  for (const code of [...codes, ...COMMON, ...(input.validated ? VALIDATED : []), ...(input.body ? WITH_BODY : [])]) {
    const status = CODES[code].status;
    byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), code])]);
  }
  const out: Json = {};
  if (page) out['200'] = { description: 'the page, a static asset, a redirect, or an event stream' };
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[String(status)] = {
      description: list.map((c) => `\`${c}\``).join(', '),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } },
    };
  }
  return out;
}

export function openApiDocument(routes: readonly RouteOptions[]): Json {
  const paths: Record<string, Record<string, Json>> = {};
  const seen = routes
    .flatMap((route) => (Array.isArray(route.method) ? route.method : [route.method]).map((method) => ({ method: String(method).toUpperCase(), route })))
    .filter(({ method }) => method !== 'HEAD')
    // The JSON API first, then the dashboard's browser routes.
    .sort(
      (a, b) =>
        Number(!a.route.url.startsWith('/v1/')) - Number(!b.route.url.startsWith('/v1/')) ||
        byCodeUnits(a.route.url, b.route.url) ||
        byCodeUnits(a.method, b.method),
    );
  for (const { method, route } of seen) {
    const path = route.url.replace(/:([A-Za-z_]+)/g, '{$1}');
    const key = `${method} ${path}`;
    const doc = ROUTES[key];
    const access = (route.config as { dashboard?: 'session' | 'login' } | undefined)?.dashboard;
    const open = (route.config as { unauthenticated?: boolean } | undefined)?.unauthenticated === true;
    const schema = (route.schema ?? {}) as { querystring?: unknown; params?: unknown; body?: unknown };
    const params = [...(schema.params ? parameters(schema.params, 'path') : []), ...(schema.querystring ? parameters(schema.querystring, 'query') : [])];
    const page = access !== undefined && !path.startsWith('/dashboard/api/');
    paths[path] ??= {};
    paths[path][method.toLowerCase()] = {
      operationId: key.replace(/[^A-Za-z0-9]+/g, '_').replace(/_+$/, ''),
      summary: doc?.summary ?? 'undocumented: add it to daemon/http/openapi.ts',
      tags: [path.startsWith('/dashboard') || path === '/v1/dashboard/link' || path === '/v1/workspaces' ? 'dashboard' : 'api'],
      security: access === 'login' || open ? [] : access === 'session' ? [{ dashboardSession: [] }] : [{ bearer: [] }],
      ...(params.length === 0 ? {} : { parameters: params }),
      ...(schema.body === undefined ? {} : { requestBody: { required: true, content: { 'application/json': { schema: plain(schema.body) } } } }),
      responses: responses(doc?.codes ?? [], page && doc?.codes.length === 0, {
        validated: params.length > 0 || schema.body !== undefined,
        body: method === 'POST',
      }),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'session-handoff daemon',
      version: String(PROTOCOL_VERSION),
      description:
        'Loopback only. Every /v1/ request: Host 127.0.0.1:PORT, localhost:PORT or [::1]:PORT; no Origin header; Authorization: Bearer <token of the state dir>. ' +
        'Dashboard routes (/dashboard/…): the same Host rule; an Origin only when exactly http://127.0.0.1:PORT; Sec-Fetch-Site only same-origin or none; the session cookie from /dashboard/login. ' +
        'Every JSON body is the Envelope; docs/codes.md maps each code to its HTTP status and CLI exit code. ' +
        'The same routes answer on the Unix socket <state dir>/daemon.sock (the CLI and hooks; no Host check there). ' +
        'Before sending the token over TCP, a client can check it talks to the daemon with POST /v1/hello (docs/http-api.md).',
    },
    servers: [{ url: 'http://127.0.0.1:{port}', variables: { port: { default: '0', description: 'the port in <state dir>/daemon.json' } } }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'the 64 hex characters of <state dir>/token' },
        dashboardSession: {
          type: 'apiKey',
          in: 'cookie',
          name: 'handoff_dashboard_PORT',
          description: 'set by GET /dashboard/login; http-only, SameSite=Strict, Path=/dashboard, 12 h, forgotten when the daemon restarts',
        },
      },
      schemas: { Envelope: ENVELOPE },
    },
    paths,
  };
}

interface Operation {
  summary: string;
  security: Record<string, unknown>[];
  parameters?: { name: string; in: string; required: boolean; description?: string; schema: Json }[];
  requestBody?: { content: { 'application/json': { schema: Json } } };
  responses: Record<string, { description: string }>;
}

function typeOf(schema: Json): string {
  if (Array.isArray(schema['anyOf'])) return (schema['anyOf'] as Json[]).map(typeOf).join(' \\| ');
  if (Array.isArray(schema['enum'])) return (schema['enum'] as unknown[]).map((v) => `\`${String(v)}\``).join(' \\| ');
  if (schema['const'] !== undefined) return `\`${String(schema['const'])}\``;
  if (schema['type'] === 'array') return `${typeOf((schema['items'] ?? {}) as Json)}[]`;
  if (typeof schema['type'] === 'string') return schema['type'];
  return 'any';
}

function fieldRows(properties: Record<string, Json>, required: ReadonlySet<string>, where: string): string[] {
  return Object.entries(properties).map(([name, schema]) => {
    const notes = [
      schema['description'],
      schema['pattern'] ? `pattern \`${String(schema['pattern'])}\`` : null,
      schema['maxLength'] ? `≤ ${String(schema['maxLength'])} chars` : null,
    ]
      .filter((n) => n !== null && n !== undefined)
      .join('; ');
    return `| \`${name}\` | ${where} | ${required.has(name) ? 'yes' : 'no'} | ${typeOf(schema)} | ${String(notes).replace(/\|/g, '\\|')} |`;
  });
}

/** The same document as a page people read. */
export function apiReferenceMarkdown(document: Json): string {
  const lines = [
    '# HTTP API reference',
    '',
    "<!-- Generated by `npm run openapi` from the routes' schemas (daemon/http/openapi.ts); do not edit. -->",
    '',
    `Machine-readable: [openapi.json](openapi.json) (OpenAPI 3.1). Rules every request meets, and the guarantees: [http-api.md](http-api.md). Codes: [codes.md](codes.md).`,
    '',
    String((document['info'] as Json)['description']),
    '',
  ];
  const paths = document['paths'] as Record<string, Record<string, Operation>>;
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const auth =
        op.security.length === 0
          ? path === '/dashboard/login'
            ? 'a one-time ticket'
            : 'none (no token is sent)'
          : 'bearer' in (op.security[0] ?? {})
            ? 'bearer token'
            : 'dashboard session cookie';
      lines.push(`## \`${method.toUpperCase()} ${path}\``, '', `${op.summary}. Auth: ${auth}.`, '');
      const rows: string[] = [];
      for (const p of op.parameters ?? [])
        rows.push(
          ...fieldRows({ [p.name]: { ...p.schema, ...(p.description ? { description: p.description } : {}) } }, new Set(p.required ? [p.name] : []), p.in),
        );
      const body = op.requestBody?.content['application/json'].schema;
      if (body !== undefined)
        rows.push(...fieldRows((body['properties'] ?? {}) as Record<string, Json>, new Set((body['required'] ?? []) as string[]), 'body'));
      if (rows.length > 0) lines.push('| field | in | required | type | notes |', '|---|---|---|---|---|', ...rows, '');
      if (body !== undefined && body['additionalProperties'] === false) lines.push('Unknown body fields are refused (`invalid_body`).', '');
      const answers = Object.entries(op.responses).map(([status, r]) => `${status}: ${r.description}`);
      lines.push(`Answers — ${answers.join(' · ')}`, '');
    }
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

export async function openApiFiles(): Promise<{ json: string; markdown: string }> {
  const document = openApiDocument(await collectRoutes());
  return { json: `${JSON.stringify(document, null, 2)}\n`, markdown: apiReferenceMarkdown(document) };
}
