import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { V1_PREFIX } from '../../daemon/http/routes/v1-routes.js';
import { CONTEXT_EVENTS } from '../../schemas/agent-context.schema.js';
import { METRICS, SOURCES } from '../../schemas/telemetry.schema.js';
import { api, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { servedV1Routes } from '../support/route-table.js';
import { tempDir, tempRepo } from '../support/git.js';
import { twoClones } from '../support/scenario.js';
import { newFigures, saveFigures, TransitionLog } from './support/figures.js';
import { changesSince, journalMark, journalMoved, type JournalMark } from './support/journal-read.js';
import { encodeRequest, sendRaw, type RawRequest } from './support/raw-http.js';
import { seedFrom } from './support/rng.js';

/*
 * HTTP fuzzing of the real daemon over loopback TCP: generated methods, targets (path traversal in
 * cycle ids and repo paths included), headers, encodings and bodies (oversized, deeply nested,
 * malformed, prototype-poisoning). No answer may be a 5xx, the daemon must never die, and a 4xx must
 * change nothing: no journal record, no file. Then the exhaustive Host × Origin × token ×
 * content-type matrix: only a loopback Host, no Origin and the right token pass.
 */

const SOAK = process.env['SOAK'] === '1';
const FUZZ_RUNS = Number(process.env['FUZZ_RUNS'] ?? (SOAK ? 100_000 : 6_000));
const REFUSED_RUNS = Number(process.env['FUZZ_REFUSED_RUNS'] ?? (SOAK ? 20_000 : 2_000));
const SEED = seedFrom('FUZZ_SEED');
const figures = newFigures();
const transitions = new TransitionLog();
const started = Date.now();

let daemon: DaemonProcess;
let repo: string;
let pair: { a: string; b: string };
let journalPath: string;
const otherToken = 'f'.repeat(64);

/**
 * Events the daemon appends by itself — a drain an earlier valid request started, the file watcher
 * catching up with a PAUSE or capsule file an earlier valid request wrote, PREPARE's rehearsal of the
 * way out that an earlier valid reading started — never a refused request's.
 * The files themselves are checked separately: a refusal must not touch them.
 */
const BACKGROUND = new Set([
  'DRAIN_WAITED',
  'DRAIN_STEP_DONE',
  'DRAIN_BLOCKED',
  'DRAIN_REVISION',
  'CHECKPOINT_VERIFIED',
  'RETURN_READY',
  'LEASE_HEAD',
  'REMOTE_LEASE',
  'CAPSULE_SET',
  'PAUSE_SET',
  'WAY_OUT',
]);

/** A file's identity and content version, cheaply: inode, size and change time. */
const sha = (path: string) => {
  const stats = statSync(path, { bigint: true, throwIfNoEntry: false });
  return stats === undefined ? null : `${stats.ino}:${stats.size}:${stats.ctimeNs}`;
};

function watchedFiles(): Record<string, string | null> {
  const files: Record<string, string | null> = { statePause: sha(join(daemon.stateDir, 'PAUSE')) };
  for (const root of [repo, pair.a, pair.b]) {
    files[`${root}:capsule`] = sha(join(root, '.session-handoff', 'capsule.json'));
    files[`${root}:pause`] = sha(join(root, '.session-handoff', 'PAUSE'));
    files[`${root}:lease`] = sha(join(root, '.session-handoff', 'lease.json'));
  }
  return files;
}

/** The change records a refused request may have let through since `mark`: all but the daemon's own background ones. */
const requestRecordsSince = (mark: JournalMark): string[] => changesSince(journalPath, mark).filter((type) => !BACKGROUND.has(type));

beforeAll(async () => {
  const stateDir = tempDir('fuzz');
  chmodSync(stateDir, 0o700);
  writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ git_timeout_seconds: 10 }));
  daemon = await startDaemon(stateDir);
  journalPath = join(stateDir, 'journal.jsonl');
  repo = tempRepo();
  mkdirSync(join(repo, 'sub'));
  pair = twoClones();
});

afterAll(async () => {
  await daemon.stop();
  transitions.addJournal(journalPath);
  figures.extra['seed'] = SEED;
  saveFigures('http-fuzz', figures, transitions, (Date.now() - started) / 1000);
});

// ------------------------------------------------------------------------------------------------
// The request generator

const hosts = () => [`127.0.0.1:${daemon.port}`, `localhost:${daemon.port}`, `[::1]:${daemon.port}`];
const LONG = 'x'.repeat(5000);

const repoArb = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom('R', 'A', 'B', 'R/sub', 'R/', 'A/.') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '/',
      '/tmp',
      '/nonexistent/dir',
      'relative/dir',
      '',
      '.',
      '..',
      'R/.git',
      'R/../../..',
      '/proc/self/cwd',
      '/dev/null',
      'STATE',
      '/etc/passwd',
      'R/\u0000x',
      LONG,
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
);
const cycleArb = fc.oneof(
  fc.constantFrom(
    '20261129T081500Z-k3f9qa',
    '../../../etc/passwd',
    '20261129T081500Z-k3f9qa/../../x',
    '..%2F..%2Fetc',
    '20261129T081500Z-K3F9QA',
    '20261129T081500Z-k3f9qa\n',
    '.session-handoff',
    'NaN',
  ),
  fc.stringMatching(/^[0-9]{8}T[0-9]{6}Z-[a-z2-7]{6}$/),
  fc.string({ maxLength: 30 }),
);
const tokenArb = fc.oneof(fc.integer({ min: -3, max: 50 }), fc.constantFrom(0, 1.5, 2 ** 53, -0, '1', null, 1e308), fc.anything());
const percentArb = fc.oneof(fc.integer({ min: 0, max: 50 }), fc.double({ noNaN: true }), fc.constantFrom(null, -1, 1e308, '50', true));
const textArb = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('', LONG, 'a'.repeat(2001), '\u0000', '\ud800'));

/** A body shaped for the route, with valid values mostly and hostile ones sometimes. */
const routes: { method: string; path: string; body: fc.Arbitrary<Record<string, unknown>> | null; query?: fc.Arbitrary<Record<string, unknown>> }[] = [
  { method: 'GET', path: '/v1/status', body: null, query: fc.record({ repo: repoArb }) },
  { method: 'GET', path: '/v1/lease', body: null, query: fc.record({ repo: repoArb }) },
  { method: 'GET', path: '/v1/check', body: null, query: fc.record({ repo: repoArb }) },
  { method: 'GET', path: '/v1/capsule', body: null, query: fc.record({ repo: repoArb }) },
  { method: 'GET', path: '/v1/cycles', body: null, query: fc.record({ repo: repoArb }, { requiredKeys: [] }) },
  { method: 'GET', path: '/v1/cycle', body: null, query: fc.record({ cycle: cycleArb }) },
  {
    method: 'GET',
    path: '/v1/cycles/resolve',
    body: null,
    query: fc.record({ prefix: fc.oneof(fc.constantFrom('20261129', '20261129T08', '2026112'), cycleArb) }),
  },
  { method: 'GET', path: '/v1/workspaces', body: null },
  {
    method: 'POST',
    path: '/v1/signals',
    body: fc.record(
      {
        repo: repoArb,
        source: fc.constantFrom(...SOURCES, 'guess'),
        metric: fc.constantFrom(...METRICS, 'vibes'),
        used_percent: percentArb,
        resets_at: fc.option(fc.integer()),
        observed_at: fc.option(fc.date({ noInvalidDate: true }).map((d) => d.toISOString())),
      },
      { requiredKeys: ['repo', 'source', 'metric', 'used_percent'] },
    ),
  },
  {
    method: 'POST',
    path: '/v1/warnings',
    body: fc.record(
      { repo: repoArb, source: fc.constantFrom(...SOURCES), text: textArb, kind: fc.constantFrom('rate_limit', 'other', 'bogus') },
      { requiredKeys: ['repo', 'source', 'text'] },
    ),
  },
  { method: 'POST', path: '/v1/prepare', body: fc.record({ repo: repoArb, reason: textArb }, { requiredKeys: ['repo'] }) },
  { method: 'POST', path: '/v1/now', body: fc.record({ repo: repoArb, reason: textArb, wait: fc.boolean() }, { requiredKeys: ['repo'] }) },
  { method: 'POST', path: '/v1/rehearse', body: fc.record({ repo: repoArb }) },
  { method: 'POST', path: '/v1/drained', body: fc.record({ repo: repoArb }) },
  { method: 'POST', path: '/v1/resume', body: fc.record({ repo: repoArb }) },
  // The capsule is the one free-form body (any JSON object, or Markdown): weighed three times.
  ...Array.from({ length: 3 }, () => ({
    method: 'POST',
    path: '/v1/capsule',
    body: fc.record({
      repo: repoArb,
      capsule: fc.oneof(
        { weight: 3, arbitrary: fc.record({ objective: textArb, next_action: textArb, decisions: fc.array(textArb, { maxLength: 3 }) }, { requiredKeys: [] }) },
        textArb,
        fc.anything(),
      ),
    }),
  })),
  {
    method: 'POST',
    path: '/v1/verify',
    body: fc.record({ repo: repoArb, cycle: cycleArb, latest: fc.boolean(), return: fc.boolean(), checkout: fc.boolean() }, { requiredKeys: ['repo'] }),
  },
  {
    method: 'POST',
    path: '/v1/accept',
    body: fc.record(
      { repo: repoArb, cycle: cycleArb, latest: fc.boolean(), return: fc.boolean(), checkout: fc.boolean(), as: textArb },
      { requiredKeys: ['repo', 'as'] },
    ),
  },
  { method: 'POST', path: '/v1/return', body: fc.record({ repo: repoArb, token: tokenArb, wait: fc.boolean() }, { requiredKeys: ['repo'] }) },
  { method: 'POST', path: '/v1/close', body: fc.record({ repo: repoArb, one_way: fc.boolean(), token: tokenArb }, { requiredKeys: ['repo', 'one_way'] }) },
  { method: 'POST', path: '/v1/lease/acquire', body: fc.record({ repo: repoArb, as: fc.oneof(fc.constantFrom('agent-a', 'agent-b'), textArb) }) },
  { method: 'POST', path: '/v1/lease/renew', body: fc.record({ repo: repoArb, token: tokenArb }) },
  { method: 'POST', path: '/v1/lease/release', body: fc.record({ repo: repoArb, token: tokenArb }) },
  { method: 'POST', path: '/v1/lease/break', body: fc.record({ repo: repoArb, reason: textArb }) },
  {
    method: 'POST',
    path: '/v1/pause',
    body: fc.record({ scope: fc.constantFrom('workspace', 'global', 'galaxy'), repo: repoArb, reason: textArb }, { requiredKeys: ['scope'] }),
  },
  { method: 'POST', path: '/v1/unpause', body: fc.record({ scope: fc.constantFrom('workspace', 'global'), repo: repoArb }, { requiredKeys: ['scope'] }) },
  { method: 'POST', path: '/v1/dashboard/link', body: null },
  { method: 'POST', path: '/v1/cancel', body: fc.record({ repo: repoArb, reason: textArb }, { requiredKeys: ['repo'] }) },
  {
    method: 'POST',
    path: '/v1/prune',
    body: fc.record(
      { repo: repoArb, remote: fc.oneof(fc.constantFrom('origin', '-x', '--upload-pack=touch /tmp/p'), textArb), dry_run: fc.boolean() },
      { requiredKeys: ['repo', 'dry_run'] },
    ),
  },
  { method: 'GET', path: '/v1/operations', body: null },
  { method: 'POST', path: '/v1/operations/cancel', body: fc.record({ operation: fc.oneof(fc.uuid(), textArb) }) },
  { method: 'POST', path: '/v1/config/reload', body: null },
  {
    method: 'POST',
    path: '/v1/agent-context',
    body: fc.record({
      repo: repoArb,
      session: fc.oneof(fc.constantFrom('agent-a', 'agent-b'), textArb),
      event: fc.constantFrom(...CONTEXT_EVENTS, 'Stop', ''),
    }),
  },
  { method: 'POST', path: '/v1/hello', body: fc.record({ nonce: fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{16,40}$/), textArb) }) },
  {
    method: 'POST',
    path: '/v1/ingest/claude-statusline',
    body: fc.record(
      {
        payload: fc.oneof(
          fc.string(),
          fc.json(),
          fc.record({ cwd: repoArb, rate_limits: fc.anything() }).map((v) => JSON.stringify(v)),
        ),
        repo: repoArb,
        executor: textArb,
      },
      { requiredKeys: ['payload'] },
    ),
  },
  {
    method: 'POST',
    path: '/v1/ingest/codex-rollout',
    body: fc.record({ payload: fc.oneof(fc.string(), fc.json()), repo: repoArb }, { requiredKeys: ['payload'] }),
  },
  {
    method: 'POST',
    path: '/v1/ingest/anthropic-headers',
    body: fc.record(
      { payload: fc.oneof(fc.string(), fc.constant('HTTP/1.1 429\r\nanthropic-ratelimit-unified-5h-utilization: 0.95\r\n')), repo: repoArb },
      { requiredKeys: ['payload'] },
    ),
  },
];

/** How the JSON value or its bytes are spoiled. */
type Spoil =
  | 'none'
  | 'drop'
  | 'unknown'
  | 'swap'
  | 'deep-array'
  | 'deep-object'
  | 'deep-inside'
  | 'proto'
  | 'truncate'
  | 'oversize'
  | 'bad-utf8'
  | 'bom'
  | 'utf16'
  | 'gzip'
  | 'empty'
  | 'not-json';

const spoilArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant<Spoil>('none') },
  {
    weight: 6,
    arbitrary: fc.constantFrom<Spoil>(
      'drop',
      'unknown',
      'swap',
      'deep-array',
      'deep-object',
      'deep-inside',
      'deep-inside',
      'proto',
      'truncate',
      'oversize',
      'bad-utf8',
      'bom',
      'utf16',
      'gzip',
      'empty',
      'not-json',
    ),
  },
);

interface Generated {
  readonly route: number;
  readonly body: Record<string, unknown> | null;
  readonly query: Record<string, unknown> | null;
  readonly spoil: Spoil;
  readonly depth: number;
  readonly swapWith: unknown;
  readonly method: string | null;
  readonly target: 'plain' | 'traversal' | 'encoded' | 'double-slash' | 'trailing' | 'upper' | 'absolute' | 'long' | 'query-repeat' | 'unicode';
  readonly host: number;
  readonly auth: number;
  readonly contentType: number;
  readonly framing: 'length' | 'chunked' | 'none' | 'short-length' | 'double-length';
  readonly extra: readonly (readonly [string, string])[];
}

const generated: fc.Arbitrary<Generated> = fc.integer({ min: 0, max: routes.length - 1 }).chain((route) =>
  fc.record({
    route: fc.constant(route),
    body: routes[route]?.body ?? fc.constant(null),
    query: routes[route]?.query ?? fc.constant(null),
    spoil: spoilArb,
    depth: fc.integer({ min: 500, max: 30_000 }),
    swapWith: fc.anything(),
    method: fc.oneof(
      { weight: 9, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'G3T') },
    ),
    target: fc.oneof(
      { weight: 12, arbitrary: fc.constant('plain' as const) },
      { weight: 4, arbitrary: fc.constantFrom('traversal', 'encoded', 'double-slash', 'trailing', 'upper', 'absolute', 'long', 'query-repeat', 'unicode') },
    ),
    host: fc.oneof({ weight: 19, arbitrary: fc.integer({ min: 0, max: 2 }) }, { weight: 1, arbitrary: fc.integer({ min: 3, max: 6 }) }),
    auth: fc.oneof({ weight: 19, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 4 }) }),
    contentType: fc.oneof({ weight: 17, arbitrary: fc.constant(0) }, { weight: 3, arbitrary: fc.integer({ min: 1, max: 6 }) }),
    framing: fc.oneof(
      { weight: 17, arbitrary: fc.constant('length' as const) },
      { weight: 3, arbitrary: fc.constantFrom('chunked', 'none', 'short-length', 'double-length') },
    ),
    extra: fc.array(
      fc.oneof(
        fc.constantFrom<[string, string]>(
          ['X-Forwarded-Host', 'evil.example'],
          ['Cookie', 'session=1'],
          ['Expect', '100-continue'],
          ['Accept-Encoding', 'gzip'],
          ['Origin', 'http://evil.example'],
          ['X-Forwarded-For', '8.8.8.8'],
        ),
        fc.tuple(fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,20}$/), fc.stringMatching(/^[ -~]{0,40}$/)),
      ),
      { maxLength: 3 },
    ),
  }),
);

function resolvePaths(value: unknown): unknown {
  if (typeof value === 'string') {
    if (value === 'STATE') return daemon.stateDir;
    return value
      .replace(/^R(?=\/|$)/, repo)
      .replace(/^A(?=\/|$)/, pair.a)
      .replace(/^B(?=\/|$)/, pair.b);
  }
  if (Array.isArray(value)) return value.map(resolvePaths);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'repo' || k === 'cwd' ? resolvePaths(v) : v]));
  return value;
}

/** The request bytes, and whether its framing is broken on purpose (then a closed socket is an answer too). */
function build(g: Generated): { request: RawRequest; framingBroken: boolean; mayStop: boolean } {
  const route = routes[g.route] ?? routes[0];
  if (route === undefined) throw new Error('no routes');
  let value = resolvePaths(g.body) as Record<string, unknown> | null;
  const keys = value === null ? [] : Object.keys(value);
  const key = keys[g.depth % Math.max(1, keys.length)] ?? 'repo';
  let text: string | null = value === null ? null : JSON.stringify(value);
  let bytes: Buffer | null = null;
  let contentEncoding: string | null = null;
  if (value !== null) {
    switch (g.spoil) {
      case 'drop':
        value = Object.fromEntries(Object.entries(value).filter(([k]) => k !== key));
        text = JSON.stringify(value);
        break;
      case 'unknown':
        text = JSON.stringify({ ...value, estimate: 42 });
        break;
      case 'swap':
        text = JSON.stringify({ ...value, [key]: g.swapWith }) ?? '{}';
        break;
      case 'deep-array':
        text = `${JSON.stringify(value).slice(0, -1)}${keys.length > 0 ? ',' : ''}"${key}":${'['.repeat(g.depth)}${']'.repeat(g.depth)}}`;
        break;
      case 'deep-object':
        text = JSON.stringify({ ...value, [key]: 0 }).replace(`"${key}":0`, `"${key}":${'{"a":'.repeat(g.depth)}1${'}'.repeat(g.depth)}`);
        break;
      case 'deep-inside': {
        // Deep nesting one level down, inside a nested object (a capsule's list, an adapter payload).
        const marker = '"\u0000deep"';
        const inner = Object.entries(value).find(([, v]) => v !== null && typeof v === 'object' && !Array.isArray(v));
        const target =
          inner === undefined
            ? { ...value, nested: { decisions: '\u0000deep' } }
            : { ...value, [inner[0]]: { ...(inner[1] as object), decisions: '\u0000deep' } };
        text = JSON.stringify(target).replace(marker, `${'['.repeat(g.depth)}${']'.repeat(g.depth)}`);
        break;
      }
      case 'proto':
        text = `{"__proto__":{"polluted":true},${JSON.stringify(value).slice(1)}`;
        break;
      case 'truncate':
        text = JSON.stringify(value).slice(0, Math.max(1, g.depth % 40));
        break;
      case 'oversize':
        text = JSON.stringify({ ...value, pad: 'p'.repeat(70_000 + g.depth) });
        break;
      case 'bad-utf8':
        bytes = Buffer.concat([
          Buffer.from(JSON.stringify(value).slice(0, -1)),
          Buffer.from([0x2c, 0x22, 0x78, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0xff, 0xfe, 0x22, 0x7d]),
        ]);
        break;
      case 'bom':
        bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(value))]);
        break;
      case 'utf16':
        bytes = Buffer.from(JSON.stringify(value), 'utf16le');
        break;
      case 'gzip':
        bytes = gzipSync(JSON.stringify(value));
        contentEncoding = 'gzip';
        break;
      case 'empty':
        text = '';
        break;
      case 'not-json':
        text = `repo=${encodeURIComponent(String(value['repo']))}&x=1`;
        break;
      case 'none':
        break;
    }
  }
  const body = bytes ?? Buffer.from(text ?? '', 'utf8');
  let path = route.path;
  if (route.query !== undefined && g.query !== null) {
    const query = new URLSearchParams(Object.entries(resolvePaths(g.query) as Record<string, unknown>).map(([k, v]): [string, string] => [k, String(v)]));
    path += `?${query.toString()}`;
  }
  switch (g.target) {
    case 'traversal':
      path = `/v1/../v1/./${path.slice(4)}`;
      break;
    case 'encoded':
      path = path.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`).replace('/v1/', '/v1%2F');
      break;
    case 'double-slash':
      path = `/${path}`;
      break;
    case 'trailing':
      path = path.includes('?') ? path.replace('?', '/?') : `${path}/`;
      break;
    case 'upper':
      path = path.toUpperCase();
      break;
    case 'absolute':
      path = `http://evil.example${path}`;
      break;
    case 'long':
      path = `${path}${path.includes('?') ? '&' : '?'}pad=${'a'.repeat(20_000)}`;
      break;
    case 'query-repeat':
      path = `${path}${path.includes('?') ? '&' : '?'}repo=${encodeURIComponent(repo)}&repo=%2F&cycle=..%2F..`;
      break;
    case 'unicode':
      path = `${path}${path.includes('?') ? '&' : '?'}x=%F0%9F%92%A9%ED%A0%80%00`;
      break;
    case 'plain':
      break;
  }
  const method = g.method ?? route.method;
  const host = [...hosts(), `evil.example:${daemon.port}`, `127.0.0.1:${daemon.port + 1}`, '', `localhost.:${daemon.port}`][g.host] ?? '';
  const auth = [`Bearer ${daemon.token}`, `Bearer ${otherToken}`, `Basic ${daemon.token}`, '', `Bearer ${daemon.token}x`][g.auth] ?? '';
  const contentType =
    [
      'application/json',
      'text/plain',
      'application/x-www-form-urlencoded',
      '',
      'application/json; charset=utf-16',
      'multipart/form-data; boundary=zz',
      'application/json-patch+json',
    ][g.contentType] ?? '';
  const headers: [string, string][] = [
    ['Host', host],
    ['Connection', 'close'],
  ];
  if (auth !== '') headers.push(['Authorization', auth]);
  const hasBody = route.body !== null || body.length > 0;
  if (hasBody && contentType !== '') headers.push(['Content-Type', contentType]);
  if (contentEncoding !== null) headers.push(['Content-Encoding', contentEncoding]);
  for (const [name, value] of g.extra) headers.push([name, value]);
  let payload = body;
  let framingBroken = false;
  switch (g.framing) {
    case 'length':
      if (hasBody) headers.push(['Content-Length', String(body.length)]);
      break;
    case 'chunked':
      headers.push(['Transfer-Encoding', 'chunked']);
      payload = Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
      break;
    case 'none':
      // A body without a length: the server reads none, and the rest is a broken next request.
      framingBroken = body.length > 0;
      break;
    case 'short-length':
      headers.push(['Content-Length', String(Math.max(0, body.length - 1))]);
      framingBroken = true;
      break;
    case 'double-length':
      headers.push(['Content-Length', String(body.length)], ['Content-Length', String(body.length + 1)]);
      framingBroken = true;
      break;
  }
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    decoded = path;
  }
  const mayStop = /daemon\/stop/i.test(decoded);
  return { request: { method, target: path, headers, body: payload }, framingBroken, mayStop };
}

// ------------------------------------------------------------------------------------------------

describe('HTTP fuzzing of the real daemon', () => {
  it('sends every /v1 route the daemon serves (a new route is fuzzed, or named here with why not)', () => {
    // Stopping the daemon ends the run; /ingest/{adapter} is fuzzed through each adapter's own path above.
    const NOT_FUZZED = ['POST /v1/daemon/stop', 'POST /v1/ingest/:adapter'];
    const served = servedV1Routes()
      .map((row) => `${row.method} ${V1_PREFIX}${row.url}`)
      .filter((key) => !NOT_FUZZED.includes(key));
    expect(served.filter((key) => !routes.some((r) => `${r.method} ${r.path}` === key))).toEqual([]);
  });

  it(`${FUZZ_RUNS} generated requests: no 5xx, no crash, no state change on any 4xx (seed ${SEED})`, { timeout: 1_800_000 }, async () => {
    let sent = 0;
    const statuses = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(generated, async (g) => {
        const { request, framingBroken, mayStop } = build(g);
        if (mayStop) return;
        sent += 1;
        if (sent % 500 === 0) {
          // Keep the workspaces moving: lift pauses a generated request may have set.
          for (const body of [{ scope: 'global' }, { scope: 'workspace', repo }, { scope: 'workspace', repo: pair.a }])
            await api(daemon, 'POST', '/v1/unpause', body);
          figures.requests += 3;
        }
        const mark = journalMark(journalPath);
        const files = watchedFiles();
        const bytes = encodeRequest(request);
        const answer = await sendRaw(daemon.port, bytes);
        const head = bytes.subarray(0, 600).toString('latin1');
        figures.requests += 1;
        const bucket = answer.status === null ? 'closed' : `${Math.floor(answer.status / 100)}xx`;
        statuses.set(bucket, (statuses.get(bucket) ?? 0) + 1);
        expect(daemon.child.exitCode, `the daemon died: ${daemon.stderr().slice(-1500)}`).toBeNull();
        expect(answer.timedOut, 'the daemon did not answer within 5 s').toBe(false);
        if (!framingBroken) expect(answer.status, 'a well-framed request got no answer').not.toBeNull();
        expect(answer.status ?? 0, `${request.method} ${request.target.slice(0, 200)} → ${answer.body.slice(0, 400)}`).toBeLessThan(500);
        if (answer.status !== null && answer.status >= 400) {
          if (journalMoved(journalPath, mark))
            expect(requestRecordsSince(mark), `${request.method} ${request.target.slice(0, 120)} was refused (${answer.status}) but journaled`).toEqual([]);
          expect(watchedFiles(), `${request.method} ${request.target.slice(0, 120)} was refused (${answer.status}) but changed files`).toEqual(files);
          expect(answer.body, 'never a stack trace').not.toMatch(/at .*\.js:\d+/);
          // node itself answers a request without Host (empty body); everything else is an Envelope.
          if (!answer.body.startsWith('{')) return;
          const envelope = JSON.parse(answer.body) as { authority: string; error?: { hint?: string } };
          expect(envelope.authority, `${JSON.stringify(head)} → ${answer.status} ${answer.body.slice(0, 300)}`).toBe('none');
          expect(answer.body).not.toMatch(/at .*\.js:\d+/);
        }
      }),
      { numRuns: FUZZ_RUNS, seed: SEED, endOnFailure: process.env['FUZZ_NO_SHRINK'] === '1' },
    );
    figures.runs = sent;
    for (const [bucket, n] of statuses) figures.extra[`answers_${bucket}`] = n;
    // Still alive and serving.
    expect((await api(daemon, 'GET', `/v1/status?repo=${encodeURIComponent(repo)}`)).status).toBe(200);
  });

  it(
    `${REFUSED_RUNS} refused variants of every /v1 route, daemon/stop included: each a 4xx that changes nothing and stops nothing`,
    { timeout: 900_000 },
    async () => {
      const port = daemon.port;
      // Each refuses at the security hook, before any body is read: no route's effect may follow.
      const refusals: readonly (readonly [string, (headers: [string, string][]) => [string, string][], number])[] = [
        ['no token', (h) => h.filter(([name]) => name !== 'Authorization'), 401],
        ['a wrong token', (h) => h.map(([n, v]) => [n, n === 'Authorization' ? `Bearer ${otherToken}` : v]), 401],
        ['the token plus one byte', (h) => h.map(([n, v]) => [n, n === 'Authorization' ? `${v}0` : v]), 401],
        ['another scheme', (h) => h.map(([n, v]) => [n, n === 'Authorization' ? v.replace('Bearer', 'Basic') : v]), 401],
        ['a foreign Host', (h) => h.map(([n, v]) => [n, n === 'Host' ? `evil.example:${port}` : v]), 403],
        ['a loopback Host of another port', (h) => h.map(([n, v]) => [n, n === 'Host' ? `127.0.0.1:${port + 1}` : v]), 403],
        ['a foreign Origin', (h) => [...h, ['Origin', 'https://evil.example']], 403],
        ['an opaque Origin', (h) => [...h, ['Origin', 'null']], 403],
        ["the daemon's own Origin", (h) => [...h, ['Origin', `http://127.0.0.1:${port}`]], 403],
      ];
      const served = servedV1Routes();
      const bodies = (method: string, url: string) =>
        routes.find((r) => r.method === method && r.path === `${V1_PREFIX}${url.replace(':adapter', 'claude-statusline')}`)?.body ?? fc.constant({});
      const refused = fc
        .record({ row: fc.integer({ min: 0, max: served.length - 1 }), refusal: fc.integer({ min: 0, max: refusals.length - 1 }) })
        .chain(({ row, refusal }) => {
          const { method, url } = served[row] ?? { method: 'GET', url: '/status' };
          return fc.record({ method: fc.constant(method), url: fc.constant(url), refusal: fc.constant(refusal), body: bodies(method, url) });
        });
      let sent = 0;
      await fc.assert(
        fc.asyncProperty(refused, async ({ method, url, refusal, body }) => {
          const [how, spoil, status] = refusals[refusal] ?? ['', (h: [string, string][]) => h, 0];
          // `POST /v1/hello` answers without a token by design; Host and Origin still hold there.
          if (url === '/hello' && status === 401) return;
          const payload = Buffer.from(method === 'POST' ? JSON.stringify(resolvePaths(body)) : '');
          const target = `${V1_PREFIX}${url.replace(':adapter', 'claude-statusline')}${method === 'GET' ? `?repo=${encodeURIComponent(repo)}` : ''}`;
          const headers = spoil([
            ['Host', `127.0.0.1:${port}`],
            ['Connection', 'close'],
            ['Authorization', `Bearer ${daemon.token}`],
            ...(method === 'POST'
              ? ([
                  ['Content-Type', 'application/json'],
                  ['Content-Length', String(payload.length)],
                ] as [string, string][])
              : []),
          ]);
          const mark = journalMark(journalPath);
          const files = watchedFiles();
          const answer = await sendRaw(port, encodeRequest({ method, target, headers, body: payload }));
          sent += 1;
          figures.requests += 1;
          expect(answer.status, `${method} ${target} with ${how}: ${answer.body.slice(0, 300)}`).toBe(status);
          if (journalMoved(journalPath, mark)) expect(requestRecordsSince(mark), `${method} ${target} with ${how} was refused but journaled`).toEqual([]);
          expect(watchedFiles(), `${method} ${target} with ${how} was refused but changed files`).toEqual(files);
          expect(daemon.child.exitCode, `${method} ${target} with ${how} stopped the daemon`).toBeNull();
        }),
        { numRuns: REFUSED_RUNS, seed: SEED },
      );
      figures.extra['refused_variants'] = sent;
      // A stop runs right after its answer: one accepted request later, the daemon must still serve.
      expect((await api(daemon, 'GET', `/v1/status?repo=${encodeURIComponent(repo)}`)).status).toBe(200);
      expect(daemon.child.exitCode, daemon.stderr().slice(-1500)).toBeNull();
    },
  );

  it('regressions: requests the fuzzer found are 4xx Envelopes that change nothing', async () => {
    const base: Generated = {
      route: 0,
      body: null,
      query: null,
      spoil: 'none',
      depth: 500,
      swapWith: 0,
      method: null,
      target: 'plain',
      host: 0,
      auth: 0,
      contentType: 0,
      framing: 'length',
      extra: [],
    };
    const capsuleRoute = routes.findIndex((r) => r.path === '/v1/capsule' && r.method === 'POST');
    const unpauseRoute = routes.findIndex((r) => r.path === '/v1/unpause');
    // (the spoiled key is keys[depth % keys.length]: an odd depth spoils `capsule`, not `repo`)
    const cases: [string, Generated, number, RegExp][] = [
      // structuredClone overflowed its stack on a capsule nested ~2,000 levels deep: a 500.
      [
        'a capsule nested 5,001 objects deep',
        { ...base, route: capsuleRoute, body: { repo: 'R', capsule: {} }, spoil: 'deep-object', depth: 5_001 },
        400,
        /capsule cannot be read/,
      ],
      [
        'a capsule list nested 20,000 arrays deep',
        { ...base, route: capsuleRoute, body: { repo: 'R', capsule: { objective: 'x' } }, spoil: 'deep-inside', depth: 20_000 },
        400,
        /capsule/,
      ],
      // node's parser refusals were answered with fastify's own body, not an Envelope.
      ['two different Content-Lengths', { ...base, route: 1, query: { repo: 'R' }, framing: 'double-length' }, 400, /refused before any route/],
      ['a request line over the header limit', { ...base, route: unpauseRoute, body: { scope: 'workspace' }, target: 'long' }, 400, /refused before any route/],
    ];
    for (const [name, g, status, message] of cases) {
      const mark = journalMark(journalPath);
      const files = watchedFiles();
      const { request } = build(g);
      const answer = await sendRaw(daemon.port, encodeRequest(request));
      figures.requests += 1;
      expect(answer.status, `${name}: ${answer.body.slice(0, 300)}`).toBe(status);
      expect(JSON.parse(answer.body), name).toMatchObject({
        code: 'invalid_body',
        authority: 'none',
        error: { message: expect.stringMatching(message), hint: expect.any(String) },
      });
      if (journalMoved(journalPath, mark)) expect(requestRecordsSince(mark), name).toEqual([]);
      expect(watchedFiles(), name).toEqual(files);
    }
    // A GET without framing whose body node reads as a second, pipelined request (seed 1033027439):
    // refused by a synchronous onRequest hook, both answers reached the client on one connection.
    const { request } = build({ ...base, route: capsuleRoute, body: { repo: 'R', capsule: {} }, spoil: 'drop', method: 'GET', framing: 'none' });
    const answer = await sendRaw(daemon.port, encodeRequest(request));
    figures.requests += 1;
    expect(answer.status, answer.body.slice(0, 300)).toBe(400);
    expect(JSON.parse(answer.body), answer.body.slice(0, 600)).toMatchObject({ authority: 'none', error: { hint: expect.any(String) } });
  });

  it('the exhaustive Host × Origin × token × content-type matrix: only a loopback Host, no Origin and the right token pass', { timeout: 600_000 }, async () => {
    const port = daemon.port;
    const hostsMatrix: [string | null, boolean][] = [
      [`127.0.0.1:${port}`, true],
      [`localhost:${port}`, true],
      [`[::1]:${port}`, true],
      [`LOCALHOST:${port}`, true],
      [`127.0.0.1:${port + 1}`, false],
      ['127.0.0.1', false],
      ['localhost', false],
      [`evil.example:${port}`, false],
      [`127.0.0.1.evil.example:${port}`, false],
      [`localhost.:${port}`, false],
      [`0.0.0.0:${port}`, false],
      [`127.0.0.2:${port}`, false],
      [`[::ffff:127.0.0.1]:${port}`, false],
      ['', false],
      [null, false],
    ];
    const origins: (string | null)[] = [null, 'null', `http://127.0.0.1:${port}`, `http://localhost:${port}`, 'https://evil.example', ''];
    const tokens: [string | null, boolean][] = [
      [`Bearer ${daemon.token}`, true],
      [`bearer ${daemon.token}`, true],
      [`Bearer ${daemon.token} `, true],
      [`Bearer  ${daemon.token}`, false],
      [`Basic ${daemon.token}`, false],
      [`Bearer ${daemon.token}0`, false],
      [`Bearer ${otherToken}`, false],
      ['Bearer ', false],
      [daemon.token, false],
      [null, false],
    ];
    const types: [string | null, boolean][] = [
      ['application/json', true],
      ['application/json; charset=utf-8', true],
      ['APPLICATION/JSON', true],
      ['text/plain', false],
      ['application/x-www-form-urlencoded', false],
      ['multipart/form-data; boundary=x', false],
      ['text/json', false],
      [null, false],
    ];
    const body = Buffer.from(JSON.stringify({ repo, source: 'claude-statusline', metric: 'context', used_percent: 10, executor: 'matrix' }));
    let combos = 0;
    let passed = 0;
    for (const [host, hostOk] of hostsMatrix) {
      for (const origin of origins) {
        for (const [auth, authOk] of tokens) {
          for (const [type, typeOk] of types) {
            for (const method of ['POST', 'GET'] as const) {
              if (method === 'GET' && type !== null && type !== 'application/json') continue;
              const headers: [string, string][] = [['Connection', 'close']];
              if (host !== null) headers.push(['Host', host]);
              if (origin !== null) headers.push(['Origin', origin]);
              if (auth !== null) headers.push(['Authorization', auth]);
              if (method === 'POST') {
                if (type !== null) headers.push(['Content-Type', type]);
                headers.push(['Content-Length', String(body.length)]);
              }
              const target = method === 'POST' ? '/v1/signals' : `/v1/lease?repo=${encodeURIComponent(repo)}`;
              const mark = journalMark(journalPath);
              const answer = await sendRaw(port, encodeRequest({ method, target, headers, body: method === 'POST' ? body : Buffer.alloc(0) }));
              combos += 1;
              figures.requests += 1;
              const where = `${method} Host=${host} Origin=${origin} Authorization=${auth?.slice(0, 12)} Content-Type=${type}`;
              const expected =
                host === null
                  ? [400, null]
                  : !hostOk
                    ? [403, 'forbidden_host']
                    : origin !== null
                      ? [403, 'forbidden_origin']
                      : !authOk
                        ? [401, 'unauthorized']
                        : method === 'POST' && !typeOk
                          ? [415, 'unsupported_media_type']
                          : [200, method === 'POST' ? 'reading_recorded' : 'lease_shown'];
              const code = answer.body.startsWith('{') ? (JSON.parse(answer.body) as { code: string }).code : null;
              expect([answer.status, expected[1] === null ? null : code], where).toEqual(expected);
              if (answer.status === 200) passed += 1;
              // A drain a fuzzed request started may still be appending: only a request's own record counts.
              else if (journalMoved(journalPath, mark)) expect(requestRecordsSince(mark), `${where} was refused but journaled`).toEqual([]);
            }
          }
        }
      }
    }
    figures.extra['matrix_combinations'] = combos;
    figures.extra['matrix_passed'] = passed;
    // Exactly the loopback Hosts × no Origin × valid tokens pass: 4 × 1 × 3, each with 3 JSON types + 2 GETs.
    expect(passed).toBe(4 * 3 * (3 + 2));
  });
});
