import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git } from '../support/git.js';
import { machineStateDir } from '../support/machine-state.js';
import { twoClones } from '../support/scenario.js';
import { slowHttpRemote } from '../support/slow-http-remote.js';

/**
 * A status asked right after a move made on another machine must see it, even when a read of the
 * remote began before the move and is still running: sharing that read answered with the remote as
 * it was, and said it was confirmed when the read ended, after the move.
 */
let source: DaemonProcess;
let receiver: DaemonProcess;
const servers: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  [source, receiver] = await Promise.all([startDaemon(machineStateDir()), startDaemon(machineStateDir())]);
});
afterAll(async () => {
  await Promise.all([source.stop(), receiver.stop()]);
  await Promise.all(servers.map((server) => server.close()));
});

type Status = { state: string; lease: { holder: { executor: string } | null }; lease_sync: { verified_at: string | null } };

describe("a source's status reads the remote after it was asked", () => {
  it('a status that comes while a read of the remote is in flight answers from a read begun after it: an accept made meanwhile is seen', async () => {
    const { a, b, remote } = twoClones();
    writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
    const now = await cli(source.stateDir, ['now', '--no-wait', '--json'], a);
    expect(now.json.code, JSON.stringify(now.json)).toBe('handoff_ready');
    const cycle = (now.json.data?.['cycle'] as { id: string }).id;

    // The source reaches the remote through a server that holds its first answer listing the lease ref,
    // already read from the repository: a read in flight with the remote as it was.
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let listed = (): void => undefined;
    const listing = new Promise<void>((resolve) => (listed = resolve));
    let held = false;
    const server = await slowHttpRemote(remote, 0, undefined, async (answer) => {
      if (held || !answer.includes(`refs/handoff/lease/${cycle}`)) return;
      held = true;
      listed();
      await gate;
    });
    servers.push(server);
    git(a, 'remote', 'set-url', 'origin', server.url);
    const status = (): Promise<Status> =>
      api(source, 'GET', `/v1/status?repo=${encodeURIComponent(a)}`).then((answer) => answer.body.data as unknown as Status);

    const first = status();
    await listing;
    const accepted = await cli(receiver.stateDir, ['accept', cycle, '--from', 'origin', '--as', 'b', '--checkout', '--json'], b);
    expect(accepted.json.code, JSON.stringify(accepted.json)).toBe('accepted');
    const acceptedAt = new Date().toISOString();
    const second = status();
    // The second status reaches the daemon (a loopback request) while the first read is still held.
    await sleep(1_500);
    release();

    const [before, after] = await Promise.all([first, second]);
    // The first read listed the remote before the accept: that is what it says, and when.
    expect(before.state).toBe('HANDOFF_READY');
    expect(String(before.lease_sync.verified_at) < acceptedAt, `verified_at ${before.lease_sync.verified_at}, accepted at ${acceptedAt}`).toBe(true);
    expect(after).toMatchObject({ state: 'TAKEOVER', lease: { holder: { executor: 'b' } } });
    expect(String(after.lease_sync.verified_at) > acceptedAt).toBe(true);
  });
});
