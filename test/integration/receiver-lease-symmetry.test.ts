import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type DaemonProcess, sharedDaemon } from '../support/daemon.js';
import { git } from '../support/git.js';
import { twoClones } from '../support/scenario.js';
import { on, stateDir, status, takenBy, type LeaseRecord } from './travelling-scenes.js';

// Issue 25: in a receiver's checkout after `accept --checkout`, `lease release` acted on the cycle it
// took over but `lease acquire` on the checkout's own idle workspace, so `handoff return --token T2`
// was refused stale_token: a dead end at the receiver. Every lease verb there acts on the same lease.

const record = (remote: string, cycle: string) => JSON.parse(git(remote, 'show', `refs/handoff/lease/${cycle}:lease.json`)) as LeaseRecord;

describe('one machine: the receiver checkout is where the cycle lives for every lease verb', () => {
  const shared = sharedDaemon();
  const run = shared.run;

  it('accept --checkout → release → acquire --as second → return --token T2 starts the return leg', async () => {
    const { a, b, remote } = twoClones();
    writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
    const now = await run(['now', '--no-wait'], a);
    expect(now.json.code, JSON.stringify(now.json)).toBe('handoff_ready');
    const cycle = (now.json.data?.['cycle'] as { id: string }).id;
    const accepted = await run(['accept', cycle, '--as', 'first', '--checkout'], b);
    expect(accepted.json.code, JSON.stringify(accepted.json)).toBe('accepted');
    const t1 = Number(accepted.json.data?.['token']);

    expect((await run(['lease', 'release', '--token', String(t1)], b)).json.code).toBe('lease_released');
    const acquired = await run(['lease', 'acquire', '--as', 'second'], b);
    expect(acquired.json, JSON.stringify(acquired.json)).toMatchObject({ code: 'lease_acquired', data: { workspace: a } });
    const t2 = Number(acquired.json.data?.['token']);
    expect(t2).toBeGreaterThan(t1);
    // The same lease everywhere: the cycle's machine, B's view of it, and the chain on the remote.
    expect((await run(['lease', 'show'], b)).json.data).toMatchObject({ workspace: a, checkout: b, cycle, holder: { executor: 'second', token: t2 } });
    expect(record(remote, cycle)).toMatchObject({ state: 'taken', holder: { executor: 'second', token: t2 } });

    // The spent token is fenced out, the new one hands the work back.
    expect((await run(['return', '--no-wait', '--token', String(t1)], b)).json.code).toBe('stale_token');
    const returned = await run(['return', '--no-wait', '--token', String(t2)], b);
    expect(returned.json.error, JSON.stringify(returned.json)).toBeUndefined();
    expect((await status(shared.daemon, a)).cycle).toMatchObject({ id: cycle, receiver: { executor: 'second', token: t2 }, return_drain: { leg: 'return' } });

    // A break from B breaks the cycle's lease too, never B's own idle workspace.
    const other = twoClones();
    writeFileSync(join(other.a, 'f.txt'), 'one\ntwo\n');
    const again = await run(['now', '--no-wait'], other.a);
    const second = (again.json.data?.['cycle'] as { id: string }).id;
    expect((await run(['accept', second, '--as', 'first', '--checkout'], other.b)).json.code).toBe('accepted');
    expect((await run(['lease', 'break', '--reason', 'holder gone'], other.b)).json).toMatchObject({ code: 'lease_broken' });
    expect((await run(['lease', 'show'], other.b)).json.data).toMatchObject({ workspace: other.a, cycle: second, holder: null });
    expect(record(other.remote, second)).toMatchObject({ state: 'broken', holder: null });
  });
});

describe('two machines: the receiver checkout of an imported cycle, one bare remote', () => {
  let machineA: DaemonProcess;
  let machineB: DaemonProcess;
  beforeAll(async () => {
    [machineA, machineB] = await Promise.all([startDaemon(stateDir()), startDaemon(stateDir())]);
  });
  afterAll(async () => {
    await Promise.all([machineA.stop(), machineB.stop()]);
  });

  it('accept --from → release → acquire --as second → return --token T2 starts the return leg, the source following every move', async () => {
    const { a, b, remote, cycle, token: t1 } = await takenBy(machineA, machineB);
    expect((await on(machineB, ['lease', 'release', '--token', String(t1)], b)).json.code).toBe('lease_released');
    const acquired = await on(machineB, ['lease', 'acquire', '--as', 'second'], b);
    expect(acquired.json.code, JSON.stringify(acquired.json)).toBe('lease_acquired');
    const t2 = Number(acquired.json.data?.['token']);
    expect(t2).toBeGreaterThan(t1);
    expect(record(remote, cycle)).toMatchObject({ state: 'taken', holder: { executor: 'second', token: t2 } });
    expect(await status(machineA, a)).toMatchObject({ state: 'TAKEOVER', lease: { holder: { executor: 'second', token: t2 } } });

    expect((await on(machineB, ['return', '--no-wait', '--token', String(t1)], b)).json.code).toBe('stale_token');
    const returned = await on(machineB, ['return', '--no-wait', '--token', String(t2)], b);
    expect(returned.json.error, JSON.stringify(returned.json)).toBeUndefined();
    expect(returned.json.data).toMatchObject({ cycle: { id: cycle, receiver: { executor: 'second', token: t2 }, return_drain: { leg: 'return' } } });
  });
});
