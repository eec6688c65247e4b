import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon as runDaemon, type RunningDaemon } from '../../daemon/main.js';
import { agentAtWork, api, until, type DaemonProcess } from '../support/daemon.js';
import { tempDir } from '../support/git.js';
import { busyRepo } from '../support/scenario.js';

/**
 * The real daemon (daemon/main.ts: real git, real HTTP on a loopback port), in this process so that
 * its wall clock can be set back: another process's clock cannot be stepped without root. Only the
 * wall clock is injected; waits run on the system's monotonic clock, as in production.
 */
const wall = { offsetMs: 0, now: () => Date.now() + wall.offsetMs };
let running: RunningDaemon;
let daemon: Pick<DaemonProcess, 'port' | 'token'>;

beforeAll(async () => {
  const stateDir = tempDir('clock-step');
  chmodSync(stateDir, 0o700);
  writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ drain_timeout_seconds: 3 }));
  running = await runDaemon({ stateDir, port: 0, clock: wall });
  daemon = { port: running.info.port, token: readFileSync(join(stateDir, 'token'), 'utf8').trim() };
});
afterAll(async () => {
  await running.stop();
});

const status = async (repo: string) => (await api(daemon, 'GET', `/v1/status?repo=${encodeURIComponent(repo)}`)).body.data as Record<string, unknown>;

describe('every wait runs on a monotonic clock', () => {
  it('a wall clock set back an hour while EVACUATE waits for `handoff drained` does not stretch the wait', { timeout: 60_000 }, async () => {
    const { root } = busyRepo();
    // An agent session at work there, so the drain waits for it to say `handoff drained`.
    await agentAtWork(daemon, root);
    const now = await api(daemon, 'POST', '/v1/now', { repo: root, wait: true });
    expect(now.status).toBe(200);
    await until('the drain waits', async () => {
      const view = await status(root);
      return view['state'] === 'EVACUATE' && (view['cycle'] as { drain: { waited: unknown } }).drain.waited === null ? true : undefined;
    });
    const stepped = performance.now();
    wall.offsetMs = -3600_000;
    const ready = await until(
      'HANDOFF_READY',
      async () => {
        const view = await status(root);
        return view['state'] === 'HANDOFF_READY' ? view : undefined;
      },
      30_000,
    );
    // The 3 s wait, the drain's steps and a loaded machine: far under the hour the step back would add.
    expect(performance.now() - stepped).toBeLessThan(30_000);
    expect(ready['cycle']).toMatchObject({ drain: { waited: { why: 'timeout' } } });
  });
});
