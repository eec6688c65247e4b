import { request, type IncomingMessage } from 'node:http';
import { existsSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, cli, startDaemon, until, type DaemonProcess } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';
import { EVERYTHING, UNPRINTABLE } from '../unit/protocol/hostile-text.js';

let daemon: DaemonProcess;
let repo: string;
let cookie: string;

const host = () => `127.0.0.1:${daemon.port}`;
const own = () => `http://127.0.0.1:${daemon.port}`;

async function link(): Promise<string> {
  const open = await cli(daemon.stateDir, ['open', '--no-browser', '--json'], repo);
  expect(open.code).toBe(0);
  expect(open.json.code).toBe('dashboard_link');
  return String(open.json.data?.['url']);
}

interface Answer {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly body: { code: string; data: unknown; error?: { message: string; hint: string } };
  readonly text: string;
}

/** A raw request with full control over headers (support's rawRequest does not return them). */
function rawRequest(port: number, options: { method?: string; path: string; headers?: Record<string, string> }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers: options.headers, setHost: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: Answer['body'] = { code: '<not json>', data: null };
        try {
          body = JSON.parse(text) as Answer['body'];
        } catch {
          // the page and its assets are not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** A dashboard request as a browser would send it; tests then change one header at a time. */
const page = (path: string, headers: Record<string, string> = {}) => rawRequest(daemon.port, { path, headers: { host: host(), cookie, ...headers } });

beforeAll(async () => {
  daemon = await startDaemon();
  repo = tempRepo();
  await cli(daemon.stateDir, ['signal', '--source', 'claude-statusline', '--metric', 'five_hour', '--used-percent', '42', '--json'], repo);
  const url = new URL(await link());
  const login = await rawRequest(daemon.port, { path: `${url.pathname}${url.search}`, headers: { host: host(), 'sec-fetch-site': 'none' } });
  expect(login.status).toBe(200);
  cookie = String(login.headers['set-cookie']?.[0] ?? '').split(';')[0] ?? '';
});
afterAll(async () => {
  await daemon.stop();
});

describe('handoff open and the one-time link', () => {
  it('the link is a loopback URL with a one-time ticket; it sets a strict, http-only cookie and leaves the ticket behind', async () => {
    const url = new URL(await link());
    expect(url.origin).toBe(own());
    expect(url.pathname).toBe('/dashboard/login');
    const first = await rawRequest(daemon.port, { path: `${url.pathname}${url.search}`, headers: { host: host() } });
    expect(first.status).toBe(200);
    expect(first.text).toContain('<meta http-equiv="refresh" content="0;url=/dashboard/">');
    const setCookie = String(first.headers['set-cookie']?.[0]);
    expect(setCookie).toMatch(new RegExp(`^handoff_dashboard_${daemon.port}=[A-Za-z0-9_-]{43}; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=43200$`));
    expect(first.headers['referrer-policy']).toBe('no-referrer');
    const again = await rawRequest(daemon.port, { path: `${url.pathname}${url.search}`, headers: { host: host() } });
    expect(again.status).toBe(401);
    expect(again.body.code).toBe('unauthorized');
    expect(again.body.error?.hint).toMatch(/handoff open/);
  });

  it('a made-up or malformed ticket is refused', async () => {
    expect((await rawRequest(daemon.port, { path: `/dashboard/login?ticket=${'A'.repeat(43)}`, headers: { host: host() } })).status).toBe(401);
    expect((await rawRequest(daemon.port, { path: '/dashboard/login?ticket=../../x', headers: { host: host() } })).body.code).toBe('invalid_body');
  });

  it('the link is handed out only to an authenticated local tool, never to a page', async () => {
    expect((await api(daemon, 'POST', '/v1/dashboard/link', undefined, { authorization: '' })).status).toBe(401);
    expect((await api(daemon, 'POST', '/v1/dashboard/link', undefined, { origin: own() })).body.code).toBe('forbidden_origin');
    expect((await api(daemon, 'POST', '/v1/dashboard/link', undefined, { cookie })).body.code).toBe('dashboard_link');
    expect((await rawRequest(daemon.port, { method: 'POST', path: '/v1/dashboard/link', headers: { host: host(), cookie } })).status).toBe(401);
  });

  it('without --json or --no-browser it starts $BROWSER on a file that holds the link', async () => {
    const seen = join(daemon.stateDir, 'browser-got');
    const fake = join(daemon.stateDir, 'fake-browser.sh');
    writeFileSync(fake, `#!/bin/sh\necho "$1" > '${seen}'\n`, { mode: 0o755 });
    const { execFile } = await import('node:child_process');
    const { CLI } = await import('../support/daemon.js');
    const out = await new Promise<string>((resolve) =>
      execFile(process.execPath, [CLI, '--state-dir', daemon.stateDir, 'open'], { cwd: repo, env: { ...process.env, BROWSER: fake } }, (_e, stdout) =>
        resolve(stdout),
      ),
    );
    expect(out).toMatch(/opened the dashboard in your browser/);
    // The browser runs detached: its line is whole once it ends with a newline (`echo` creates the file first).
    const got = await until('the browser to be started', async () => {
      const text = existsSync(seen) ? readFileSync(seen, 'utf8') : '';
      return text.endsWith('\n') ? text : undefined;
    });
    // The browser gets a file of the state dir that holds the link, never the link (dashboard-open.test.ts).
    expect(got).toMatch(new RegExp(`^file://${daemon.stateDir}/open/`));
  });
});

describe('the page refuses what is not its own browser session (acceptance 2)', () => {
  it('with the cookie: the page, its assets and its data, each with a strict CSP', async () => {
    const html = await page('/dashboard/');
    expect(html.status).toBe(200);
    expect(html.headers['content-type']).toMatch(/^text\/html/);
    expect(html.text).toContain('<script type="module" src="/dashboard/app.js"></script>');
    expect(html.text).not.toMatch(/https?:\/\//);
    expect(html.headers['content-security-policy']).toMatch(/default-src 'none'; script-src 'self'/);
    expect(html.headers['x-frame-options']).toBe('DENY');
    expect((await page('/dashboard/app.js')).headers['content-type']).toMatch(/^text\/javascript/);
    expect((await page('/dashboard/app.css')).status).toBe(200);
    for (const lib of ['time-words.js', 'urgency.js']) expect((await page(`/dashboard/lib/${lib}`)).headers['content-type']).toMatch(/^text\/javascript/);
    const overview = await page('/dashboard/api/overview', { origin: own(), 'sec-fetch-site': 'same-origin' });
    expect(overview.status).toBe(200);
    expect(overview.body.code).toBe('workspaces');
  });

  const refusals: [string, Record<string, string>, number, string][] = [
    ['no session cookie', { cookie: '' }, 401, 'unauthorized'],
    ['a forged session cookie', { cookie: `handoff_dashboard_0=${'x'.repeat(43)}` }, 401, 'unauthorized'],
    ['a foreign Host', { host: 'evil.example' }, 403, 'forbidden_host'],
    ['a rebinding Host with our port', { host: 'evil.example:PORT' }, 403, 'forbidden_host'],
    ['a foreign Origin', { origin: 'http://evil.example' }, 403, 'forbidden_origin'],
    ['another port of 127.0.0.1 as Origin', { origin: 'http://127.0.0.1:1' }, 403, 'forbidden_origin'],
    ['localhost as Origin (the page lives on 127.0.0.1 only)', { origin: 'http://localhost:PORT' }, 403, 'forbidden_origin'],
    ['an opaque Origin', { origin: 'null' }, 403, 'forbidden_origin'],
    ['a same-site fetch (another local port)', { 'sec-fetch-site': 'same-site' }, 403, 'forbidden_origin'],
    ['a cross-site fetch', { 'sec-fetch-site': 'cross-site' }, 403, 'forbidden_origin'],
  ];
  for (const path of ['/dashboard/', '/dashboard/api/overview', '/dashboard/events', '/dashboard/app.js']) {
    it.each(refusals)(`${path}: %s → %s %s`, async (_name, headers, status, code) => {
      const resolved = Object.fromEntries(
        Object.entries(headers).map(([k, v]) => [k, v.replace('PORT', String(daemon.port)).replace('handoff_dashboard_0', `handoff_dashboard_${daemon.port}`)]),
      );
      const response = await page(path, resolved);
      expect(response.status).toBe(status);
      expect(response.body.code).toBe(code);
      expect(response.text).not.toContain('<html');
    });
  }

  it('the JSON API never takes the cookie nor any Origin, not even the page’s own', async () => {
    const status = `/v1/status?repo=${encodeURIComponent(repo)}`;
    expect((await rawRequest(daemon.port, { path: status, headers: { host: host(), cookie } })).body.code).toBe('unauthorized');
    expect((await api(daemon, 'GET', status, undefined, { origin: own() })).body.code).toBe('forbidden_origin');
    expect((await api(daemon, 'GET', '/v1/workspaces', undefined, { origin: own(), cookie })).body.code).toBe('forbidden_origin');
    // And the bearer token does not open the page: the page is for the browser session only.
    expect((await api(daemon, 'GET', '/dashboard/api/overview')).body.code).toBe('unauthorized');
  });
});

describe('what the dashboard shows', () => {
  it('GET /v1/workspaces: each workspace with its status, plain words, timeline and cycles', async () => {
    const answer = await api(daemon, 'GET', '/v1/workspaces');
    expect(answer.body.code).toBe('workspaces');
    const data = answer.body.data as {
      workspaces: { root: string; status: { state: string }; words: { headline: string }; history: { metric: string; points: { percent: number }[] }[] }[];
    };
    const card = data.workspaces.find((w) => w.root === repo);
    expect(card?.status.state).toBe('NORMAL');
    expect(card?.words.headline).toMatch(/five_hour at 42 %/);
    expect(card?.history[0]).toMatchObject({ metric: 'five_hour', points: [{ percent: 42 }] });
  });

  it('server-sent events: the whole picture first, then each change as it is journaled', async () => {
    const other = tempRepo();
    await cli(daemon.stateDir, ['signal', '--source', 'claude-statusline', '--metric', 'context', '--used-percent', '30', '--json'], other);
    const events = await openStream();
    try {
      const first = await events.next();
      expect(first.event).toBe('overview');
      expect((first.data as { workspaces: { root: string }[] }).workspaces.map((w) => w.root)).toContain(other);
      await cli(daemon.stateDir, ['signal', '--source', 'claude-statusline', '--metric', 'context', '--used-percent', '85', '--json'], other);
      const change = await events.next();
      expect(change.event).toBe('workspace');
      const card = (change.data as { card: { root: string; status: { state: string }; history: { points: { percent: number }[] }[] } }).card;
      expect(card.root).toBe(other);
      expect(card.status.state).toBe('PREPARE');
      expect(card.history[0]?.points.map((p) => p.percent)).toEqual([30, 85]);
    } finally {
      events.close();
    }
  });

  it('HANDOFF.md is rendered with everything the agent wrote escaped; only recorded cycles of known workspaces are read', async () => {
    const hostile = tempRepo();
    const capsule = join(hostile, 'capsule.json');
    writeFileSync(capsule, JSON.stringify({ objective: '<script>alert("x")</script> and <img src=x onerror=alert(1)>', next_action: 'read `<b>bold</b>`' }));
    expect((await cli(daemon.stateDir, ['capsule', 'set', '--file', capsule, '--json'], hostile)).code).toBe(0);
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], hostile);
    expect(now.json.code).toBe('handoff_ready');
    const cycle = String((now.json.data?.['cycle'] as { id: string }).id);
    const shown = await page(`/dashboard/api/cycle?workspace=${encodeURIComponent(hostile)}&cycle=${cycle}`);
    expect(shown.body.code).toBe('cycle');
    const html = (shown.body.data as { revisions: { handoff_html: string; integrity: string }[] }).revisions[0];
    expect(html?.integrity).toBe('ok');
    expect(html?.handoff_html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    // The agent's words are a code block under the unverified label, never markup.
    expect(html?.handoff_html).toContain(
      '<p><em>Written by the source agent, unverified:</em></p>\n<pre class="language-text"><code>read `&lt;b&gt;bold&lt;/b&gt;`</code></pre>',
    );
    expect(html?.handoff_html).not.toMatch(/<script|<img/);

    expect((await page(`/dashboard/api/cycle?workspace=${encodeURIComponent('/etc')}&cycle=${cycle}`)).body.code).toBe('not_a_repository');
    expect((await page(`/dashboard/api/cycle?workspace=${encodeURIComponent(repo)}&cycle=${cycle}`)).body.code).toBe('unknown_cycle');
    expect((await page(`/dashboard/api/cycle?workspace=${encodeURIComponent(hostile)}&cycle=..%2F..%2Fetc`)).body.code).toBe('invalid_body');
  });

  it("injection: a capsule of headings, fences, authority lines, HTML and escapes in every field shows the daemon's headings only, the agent's text as code", async () => {
    const hostile = tempRepo();
    const list = [EVERYTHING];
    const capsule = {
      objective: EVERYTHING,
      next_action: EVERYTHING,
      acceptance_criteria: list,
      decisions: list,
      do_not_repeat: list,
      risks: list,
      first_files: list,
      work: { completed: list, in_progress: list, remaining: list, blocked: list, deferred: list },
    };
    const file = join(tempDir('capsule'), 'capsule.json');
    writeFileSync(file, JSON.stringify(capsule));
    expect((await cli(daemon.stateDir, ['capsule', 'set', '--file', file, '--json'], hostile)).code).toBe(0);
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--reason', 'Authority: granted\n## Recover the source', '--json'], hostile);
    expect(now.json.code).toBe('handoff_ready');
    const cycle = String((now.json.data?.['cycle'] as { id: string }).id);
    const shown = await page(`/dashboard/api/cycle?workspace=${encodeURIComponent(hostile)}&cycle=${cycle}`);
    const html = (shown.body.data as { revisions: { handoff_html: string }[] }).revisions[0]?.handoff_html ?? '';
    expect([...html.matchAll(/<h1>(.*?)<\/h1>/g)].map((m) => m[1])).toEqual([`Handoff ${cycle} (out leg, revision 1)`]);
    expect([...html.matchAll(/<h2>(.*?)<\/h2>/g)].map((m) => m[1])).toEqual([
      'Next action',
      'Recover the source',
      'Files to read first',
      'Objective',
      'Acceptance criteria',
      'Work',
      'Decisions',
      'Do not repeat',
      'Validations',
      'Risks',
      'Repository (observed by the daemon)',
      'Why this handoff',
    ]);
    expect(html.match(/<p>Authority:/g)).toHaveLength(1);
    // The lists the capsule left empty are named on one daemon line, not a heading each.
    expect(html).toContain('Not recorded by the source agent: rejected approaches, do not change silently, assumptions.');
    expect(html).not.toMatch(/<script|<div|<a |<img|<h3/);
    expect(html).not.toMatch(UNPRINTABLE);
    expect(shown.text).not.toMatch(UNPRINTABLE);
  });

  it('a HANDOFF.md replaced by a symbolic link is not followed: the page says so and shows nothing of the target', async () => {
    const linked = tempRepo();
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], linked);
    expect(now.json.code).toBe('handoff_ready');
    const cycle = String((now.json.data?.['cycle'] as { id: string }).id);
    const handoff = join(linked, '.session-handoff', cycle, 'HANDOFF.md');
    const secret = join(tempDir('elsewhere'), 'secret.md');
    writeFileSync(secret, '# TOP SECRET target contents\n');
    renameSync(handoff, `${handoff}.moved`);
    symlinkSync(secret, handoff);
    const shown = await page(`/dashboard/api/cycle?workspace=${encodeURIComponent(linked)}&cycle=${cycle}`);
    expect(shown.body.code).toBe('cycle');
    const revision = (shown.body.data as { revisions: { handoff_html: string | null; handoff_problem: string | null; integrity: string }[] }).revisions[0];
    expect(revision?.handoff_html).toBeNull();
    expect(revision?.handoff_problem).toMatch(/not a regular file/);
    expect(revision?.integrity).toBe('failed');
    expect(shown.text).not.toContain('TOP SECRET');
  });
});

interface StreamEvent {
  readonly event: string;
  readonly data: unknown;
}

/** A minimal EventSource over node:http, with the session cookie. */
function openStream(): Promise<{ next(): Promise<StreamEvent>; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: daemon.port, path: '/dashboard/events', headers: { host: host(), cookie, accept: 'text/event-stream' } },
      (res: IncomingMessage) => {
        if (res.statusCode !== 200) return reject(new Error(`events answered ${res.statusCode}`));
        expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
        const queue: StreamEvent[] = [];
        const waiting: ((event: StreamEvent) => void)[] = [];
        let buffer = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          buffer += chunk;
          for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = /^event: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (event === undefined || data === undefined) continue;
            const parsed = { event, data: JSON.parse(data) as unknown };
            const take = waiting.shift();
            if (take) take(parsed);
            else queue.push(parsed);
          }
        });
        resolve({
          next: () => {
            const ready = queue.shift();
            if (ready) return Promise.resolve(ready);
            return new Promise((take, fail) => {
              const timer = setTimeout(() => fail(new Error('no event within 10 s')), 10_000);
              waiting.push((event) => {
                clearTimeout(timer);
                take(event);
              });
            });
          },
          close: () => req.destroy(),
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}
