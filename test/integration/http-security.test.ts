import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, cli, rawRequest, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { tempRepo } from '../support/git.js';

let daemon: DaemonProcess;
let repo: string;

beforeAll(async () => {
  daemon = await startDaemon();
  repo = tempRepo();
  await cli(daemon.stateDir, ['lease', 'acquire', '--as', 'owner', '--json'], repo);
});
afterAll(async () => {
  await daemon.stop();
});

const signal = () => ({ repo, source: 'claude-statusline', metric: 'five_hour', used_percent: 99 });

async function snapshot() {
  const status = await api(daemon, 'GET', `/v1/status?repo=${encodeURIComponent(repo)}`);
  expect(status.status).toBe(200);
  const data = status.body.data as Record<string, unknown>;
  return { state: data['state'], readings: data['readings'], lease: data['lease'] };
}

describe('refusals leave state unchanged and the daemon alive', () => {
  const cases: [
    string,
    () => Promise<{ status: number; body: { code: string; authority: string; error?: { message: string; hint: string } } }>,
    number,
    string,
    RegExp?,
  ][] = [
    ['no token', () => api(daemon, 'POST', '/v1/signals', signal(), { authorization: '' }), 401, 'unauthorized'],
    ['a wrong token', () => api(daemon, 'POST', '/v1/signals', signal(), { authorization: `Bearer ${'0'.repeat(64)}` }), 401, 'unauthorized'],
    ['a token of another scheme', () => api(daemon, 'POST', '/v1/signals', signal(), { authorization: `Basic ${daemon.token}` }), 401, 'unauthorized'],
    ['a foreign Host', () => api(daemon, 'POST', '/v1/signals', signal(), { host: `evil.example:${daemon.port}` }), 403, 'forbidden_host'],
    ['a loopback Host with another port', () => api(daemon, 'POST', '/v1/signals', signal(), { host: `127.0.0.1:${daemon.port + 1}` }), 403, 'forbidden_host'],
    ['an Origin header', () => api(daemon, 'POST', '/v1/signals', signal(), { origin: `http://127.0.0.1:${daemon.port}` }), 403, 'forbidden_origin'],
    ['a 1 MiB body', () => api(daemon, 'POST', '/v1/signals', { ...signal(), pad: 'x'.repeat(1024 * 1024) }), 413, 'body_too_large'],
    [
      'malformed JSON',
      () =>
        rawRequest(daemon.port, {
          method: 'POST',
          path: '/v1/signals',
          body: '{"repo":',
          headers: { host: `127.0.0.1:${daemon.port}`, authorization: `Bearer ${daemon.token}`, 'content-type': 'application/json' },
        }),
      400,
      'malformed_json',
    ],
    [
      'a schema violation',
      () => api(daemon, 'POST', '/v1/signals', { ...signal(), used_percent: 'lots' }),
      400,
      'invalid_body',
      /used_percent must be number or null/,
    ],
    ['an unknown field', () => api(daemon, 'POST', '/v1/signals', { ...signal(), estimate: true }), 400, 'invalid_body', /unknown field 'estimate'/],
    ['a missing field', () => api(daemon, 'POST', '/v1/lease/release', { repo }), 400, 'invalid_body', /missing 'token'/],
    [
      'a non-JSON content type',
      () =>
        rawRequest(daemon.port, {
          method: 'POST',
          path: '/v1/signals',
          body: 'x=1',
          headers: { host: `127.0.0.1:${daemon.port}`, authorization: `Bearer ${daemon.token}`, 'content-type': 'text/plain' },
        }),
      415,
      'unsupported_media_type',
    ],
    ['an unknown route', () => api(daemon, 'GET', '/v1/../../etc/passwd'), 404, 'not_found'],
    [
      'a prototype-poisoning body',
      () =>
        rawRequest(daemon.port, {
          method: 'POST',
          path: '/v1/signals',
          body: `{"repo":"${repo}","__proto__":{"x":1}}`,
          headers: { host: `127.0.0.1:${daemon.port}`, authorization: `Bearer ${daemon.token}`, 'content-type': 'application/json' },
        }),
      400,
      'malformed_json',
    ],
  ];

  it.each(cases)('%s → %s %s', async (_name, send, status, code, message) => {
    const before = await snapshot();
    const response = await send();
    expect(response.status).toBe(status);
    expect(response.body.code).toBe(code);
    expect(response.body.authority).toBe('none');
    expect(response.body.error?.hint).toBeTruthy();
    if (message) expect(response.body.error?.message).toMatch(message);
    expect(JSON.stringify(response.body)).not.toMatch(/at .*\.js:\d+/);
    expect(await snapshot()).toEqual(before);
  });

  it('an unauthenticated request learns nothing about routes', async () => {
    const response = await api(daemon, 'GET', '/v1/nope', undefined, { authorization: '' });
    expect(response.status).toBe(401);
  });

  it('the daemon answers after all of the above', async () => {
    const ok = await api(daemon, 'POST', '/v1/signals', { ...signal(), used_percent: 10 });
    expect(ok.status).toBe(200);
    expect(ok.body.code).toBe('reading_recorded');
    for (const host of ['localhost', '[::1]']) {
      const alt = await api(daemon, 'GET', `/v1/status?repo=${encodeURIComponent(repo)}`, undefined, { host: `${host}:${daemon.port}` });
      expect(alt.status).toBe(200);
    }
  });
});
