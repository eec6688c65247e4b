import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, until, type DaemonProcess } from '../support/daemon.js';
import { git } from '../support/git.js';
import { twoClones } from '../support/scenario.js';
import { machineStateDir } from '../support/machine-state.js';

/**
 * One truth for a travelling lease: while the lease is on offer on `refs/handoff/lease/<cycle>`, a local
 * break or acquire on either machine is refused (lease_travels, 77) naming the remote, the ref and the
 * command that works; once taken, an acquire meets the holder (lease_held), the remote record keeps its
 * holder, and both machines keep saying the same holder. (Break, release and acquire written through
 * to the remote: travelling-lease-moves.test.ts.)
 */
let machineA: DaemonProcess;
let machineB: DaemonProcess;

beforeAll(async () => {
  [machineA, machineB] = await Promise.all([startDaemon(machineStateDir()), startDaemon(machineStateDir())]);
});
afterAll(async () => {
  await Promise.all([machineA.stop(), machineB.stop()]);
});

const on = (machine: DaemonProcess, args: string[], repo: string) => cli(machine.stateDir, [...args, '--json'], repo);

describe('a lease that travelled moves only on the remote', () => {
  it('break, acquire and release are refused on both machines while the cycle travels; the remote record and both machines agree; after the close they are local again', async () => {
    const { a, b, remote } = twoClones();
    const primary = await on(machineA, ['lease', 'acquire', '--as', 'primary'], a);
    expect(primary.json.code).toBe('lease_acquired');
    writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
    const now = await on(machineA, ['now', '--no-wait'], a);
    expect(now.json.code).toBe('handoff_ready');
    const cycle = (now.json.data?.['cycle'] as { id: string }).id;
    const ref = `refs/handoff/lease/${cycle}`;
    const record = () => JSON.parse(git(remote, 'show', `${ref}:lease.json`)) as { state: string; holder: { executor: string; token: number } | null };
    const expectRefused = async (machine: DaemonProcess, args: string[], repo: string, works = '--from origin') => {
      const result = await on(machine, args, repo);
      expect(result.code).toBe(77);
      expect(result.json).toMatchObject({ code: 'lease_travels', data: { cycle, remote: 'origin', ref } });
      expect(result.json.error?.message).toContain(`'origin' (${ref}`);
      expect(result.json.error?.hint).toContain(works);
    };

    // Offered on the remote: the source may not take it back, nor hand it out, by itself.
    await expectRefused(machineA, ['lease', 'break', '--reason', 'operator override'], a);
    await expectRefused(machineA, ['lease', 'acquire', '--as', 'intruder'], a);
    expect(record()).toMatchObject({ state: 'offered' });

    const accepted = await on(machineB, ['accept', cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout'], b);
    expect(accepted.json.code).toBe('accepted');
    const token = Number(accepted.json.data?.['token']);
    const head = git(remote, 'rev-parse', ref);
    expect((await on(machineA, ['status'], a)).json.data).toMatchObject({ state: 'TAKEOVER', lease: { holder: { executor: 'laptop-b', token } } });

    // Taken by B: an acquire on either machine meets the holder, and nothing travels.
    for (const [machine, repo] of [
      [machineA, a],
      [machineB, b],
    ] as const) {
      const held = await on(machine, ['lease', 'acquire', '--as', 'laptop-c'], repo);
      expect(held.json).toMatchObject({ code: 'lease_held' });
    }

    // The truth is one: the remote record did not move, and each machine names the same holder.
    expect(git(remote, 'rev-parse', ref)).toBe(head);
    expect(record()).toMatchObject({ state: 'taken', holder: { executor: 'laptop-b', token } });
    for (const [machine, repo] of [
      [machineA, a],
      [machineB, b],
    ] as const) {
      expect((await on(machine, ['status'], repo)).json.data).toMatchObject({ lease: { holder: { executor: 'laptop-b', token } } });
    }
    // The holder's token still works for what the remote records: the return.
    writeFileSync(join(b, 'f.txt'), 'one\ntwo\nthree from B\n');
    expect((await on(machineB, ['return', '--no-wait'], b)).json.code).toBe('handoff_ready');
    expect((await on(machineA, ['status'], a)).json.data?.['state']).toBe('RETURN_HANDOFF_READY');
    await expectRefused(machineA, ['lease', 'break', '--reason', 'take it back'], a, `handoff accept ${cycle} --return`);
    const back = await on(machineA, ['accept', cycle, '--return', '--as', 'primary', '--checkout'], a);
    expect(back.json).toMatchObject({ code: 'accepted', data: { state: 'CLOSED' } });
    expect(record()).toMatchObject({ state: 'closed', holder: { executor: 'primary' } });

    // Closed: the lease is this machine's own again.
    const released = await on(machineA, ['lease', 'release', '--token', String(back.json.data?.['token'])], a);
    expect(released.json.code).toBe('lease_released');
  });
});

describe('an idle machine follows the remote by itself', () => {
  it('a source nobody asks learns of an accept made on another machine from its periodic lease sync', async () => {
    // The shortest sync period: the subject of this test is that timer (every other two-machine test turns it off).
    const [source, receiver] = await Promise.all([startDaemon(machineStateDir({ lease_sync_seconds: 5 })), startDaemon(machineStateDir())]);
    try {
      const { a, b } = twoClones();
      writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
      const now = await on(source, ['now', '--no-wait'], a);
      expect(now.json.code).toBe('handoff_ready');
      const cycle = (now.json.data?.['cycle'] as { id: string }).id;
      expect((await on(receiver, ['accept', cycle, '--from', 'origin', '--as', 'laptop-b'], b)).json.code).toBe('accepted');
      // No status and no guard asks the source (each would sync): its journal shows what it followed on its own.
      const journal = join(source.stateDir, 'journal.jsonl');
      await until('the source to follow the accept', async () => (readFileSync(journal, 'utf8').includes('"REMOTE_LEASE"') ? true : undefined), 30_000);
      expect((await on(source, ['status'], a)).json.data).toMatchObject({ state: 'TAKEOVER', lease: { holder: { executor: 'laptop-b' } } });
    } finally {
      await Promise.all([source.stop(), receiver.stop()]);
    }
  });
});
