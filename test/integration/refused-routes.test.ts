import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, cli, exited, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { tempRepo } from '../support/git.js';
import { servedV1Routes } from '../support/route-table.js';

// Every /v1 route, refused four ways: the security hook answers, and no route's effect may follow.
let daemon: DaemonProcess;
let repo: string;
let leaseToken: number;

beforeAll(async () => {
  daemon = await startDaemon();
  repo = tempRepo();
  const acquired = await cli(daemon.stateDir, ['lease', 'acquire', '--as', 'owner', '--json'], repo);
  leaseToken = (acquired.json.data as { token: number }).token;
});
afterAll(async () => {
  await daemon.stop();
});

const journal = () => {
  const path = join(daemon.stateDir, 'journal.jsonl');
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
};

async function observed() {
  const status = await api(daemon, 'GET', `/v1/status?repo=${encodeURIComponent(repo)}`);
  expect(status.status).toBe(200);
  const data = status.body.data as Record<string, unknown>;
  return { state: data['state'], lease: data['lease'], paused: data['paused'], journal: journal() };
}

/** A body each POST route would act on if it were accepted (the ones it does not know are refused anyway). */
const bodyFor = (url: string): Record<string, unknown> => {
  const byUrl: Record<string, Record<string, unknown>> = {
    '/signals': { repo, source: 'claude-statusline', metric: 'five_hour', used_percent: 99 },
    '/warnings': { repo, source: 'claude-statusline', text: 'rate limited' },
    '/lease/release': { repo, token: leaseToken },
    '/lease/break': { repo, reason: 'attack' },
    '/pause': { repo, scope: 'workspace' },
    '/now': { repo, wait: false },
  };
  return byUrl[url] ?? { repo };
};

const refusals: readonly [string, (port: number, token: string) => Record<string, string>, number][] = [
  ['no token', () => ({ authorization: '' }), 401],
  ['a wrong token', () => ({ authorization: `Bearer ${'0'.repeat(64)}` }), 401],
  ['a foreign Host', (port) => ({ host: `evil.example:${port}` }), 403],
  ['a foreign Origin', () => ({ origin: 'https://evil.example' }), 403],
];

describe('a refused request has no effect, on any route', () => {
  it('answers every /v1 route refused four ways, and the daemon, its state, lease and journal stay as they were', async () => {
    const before = await observed();
    const routes = servedV1Routes();
    expect(routes.map((row) => row.url)).toContain('/daemon/stop');
    for (const row of routes) {
      for (const [how, headers, status] of refusals) {
        // `POST /v1/hello` answers without a token by design; Host and Origin still hold there.
        if (row.url === '/hello' && status === 401) continue;
        const path = `/v1${row.url.replace(':adapter', 'claude-statusline')}${row.method === 'GET' ? `?repo=${encodeURIComponent(repo)}` : ''}`;
        const answer = await api(daemon, row.method, path, row.method === 'POST' ? bodyFor(row.url) : undefined, headers(daemon.port, daemon.token));
        expect(answer.status, `${row.method} ${path} with ${how}`).toBe(status);
      }
    }
    // A stop would follow its answer within milliseconds; a second is plenty to see it did not come.
    const stopped = await Promise.race([exited(daemon.child).then(() => true), sleep(1000).then(() => false)]);
    expect(stopped, daemon.stderr()).toBe(false);
    expect(await observed()).toEqual(before);
  });

  it('still stops on an accepted request', async () => {
    const answer = await api(daemon, 'POST', '/v1/daemon/stop');
    expect(answer.body.code).toBe('daemon_stopping');
    await exited(daemon.child);
  });
});
