import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git } from '../support/git.js';
import { twoClones } from '../support/scenario.js';
import { machineStateDir } from '../support/machine-state.js';

// Two machines: two daemons with their own state dirs, each with its clone of one bare remote.
let source: DaemonProcess;
let receiver: DaemonProcess;
beforeAll(async () => {
  // The source learns the accept only when asked: a background sync could follow it before the second test pauses.
  [source, receiver] = await Promise.all([startDaemon(machineStateDir()), startDaemon(machineStateDir())]);
});
afterAll(async () => {
  await Promise.all([source.stop(), receiver.stop()]);
});

async function handedOff() {
  const scene = twoClones();
  writeFileSync(join(scene.a, 'f.txt'), 'one\ntwo\n');
  const now = await cli(source.stateDir, ['now', '--no-wait', '--json'], scene.a);
  expect(now.json.code, JSON.stringify(now.json)).toBe('handoff_ready');
  return { ...scene, cycle: (now.json.data?.['cycle'] as { id: string }).id };
}

const remoteLease = (remote: string, cycle: string) =>
  JSON.parse(git(remote, 'show', `refs/handoff/lease/${cycle}:lease.json`)) as { state: string; paused?: { since: string; reason: string | null } | null };
const accept = (b: string) => cli(receiver.stateDir, ['accept', '--latest', '--from', 'origin', '--as', 'cloud', '--json'], b);
const status = async (a: string) =>
  (await cli(source.stateDir, ['status', '--json'], a)).json.data as { state: string; lease_sync: { error: string | null } | null };

describe('pause is a property of the cycle everywhere it lives', () => {
  it('a paused source’s offer carries the pause: another machine’s accept is refused paused_denied before anything is written; unpaused, it is taken', async () => {
    const { a, b, remote, cycle } = await handedOff();
    const pause = (await cli(source.stateDir, ['pause', '--reason', 'wrong branch, stop', '--json'], a)).json;
    expect(pause.code).toBe('paused');
    // The pause is written into the offer before the answer, not at the next lease sync: the answer says so.
    expect(pause.data?.['offers']).toEqual([{ cycle, remote: 'origin', carried: true, error: null }]);
    expect(remoteLease(remote, cycle)).toMatchObject({ state: 'offered', paused: { reason: 'wrong branch, stop' } });
    expect((await cli(source.stateDir, ['unpause'], a)).stdout).toContain(`the offer of cycle ${cycle} on origin is open again`);
    expect(remoteLease(remote, cycle).paused).toBeNull();
    expect((await cli(source.stateDir, ['pause', '--reason', 'wrong branch, stop'], a)).stdout).toContain(
      `the offer of cycle ${cycle} on origin now says paused: another machine's accept is refused`,
    );

    const head = git(b, 'rev-parse', 'HEAD');
    const refused = await accept(b);
    expect([refused.code, refused.json.code], JSON.stringify(refused.json)).toEqual([77, 'paused_denied']);
    expect(refused.json.error?.message).toMatch(new RegExp(`the source paused cycle ${cycle} .*wrong branch, stop`));
    expect(existsSync(join(b, '.session-handoff', cycle)), 'nothing of the package is written').toBe(false);
    expect(git(b, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(b, 'status', '--porcelain')).toBe('');
    expect(remoteLease(remote, cycle).state).toBe('offered');

    expect((await cli(source.stateDir, ['unpause', '--json'], a)).json.code).toBe('unpaused');
    expect(remoteLease(remote, cycle).paused).toBeNull();
    const taken = await accept(b);
    expect(taken.json.code, JSON.stringify(taken.json)).toBe('accepted');
    expect(remoteLease(remote, cycle).state).toBe('taken');
  }, 120_000);

  it('a source paused after another machine accepted does not follow the accept, and says so; unpaused, it follows', async () => {
    const { a, b, remote, cycle } = await handedOff();
    expect((await accept(b)).json.code).toBe('accepted');
    expect(remoteLease(remote, cycle).state).toBe('taken');
    const pause = (await cli(source.stateDir, ['pause', '--json'], a)).json;
    expect(pause.code).toBe('paused');
    expect(pause.data?.['offers']).toEqual([
      {
        cycle,
        remote: 'origin',
        carried: false,
        error: expect.stringMatching(/the lease on the remote is taken by 'cloud', which this machine does not follow while paused/),
      },
    ]);
    const paused = await status(a);
    expect(paused.state).toBe('HANDOFF_READY');
    expect(paused.lease_sync?.error).toMatch(/paused .*: the lease on the remote is taken by 'cloud', which this machine does not follow while paused/);
    const unpause = (await cli(source.stateDir, ['unpause', '--json'], a)).json;
    expect(unpause.code).toBe('unpaused');
    // Followed within the unpause itself, and named as the stage that starts; no open offer is claimed.
    expect(unpause.data?.['offers']).toEqual([]);
    expect(unpause.data?.['started']).toEqual([expect.objectContaining({ state: 'TAKEOVER', cycle })]);
    expect((await status(a)).state).toBe('TAKEOVER');
  }, 120_000);
});
