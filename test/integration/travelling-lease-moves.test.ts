import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git } from '../support/git.js';
import { twoClones } from '../support/scenario.js';
import { machineStateDir } from '../support/machine-state.js';

/**
 * The dead ends of a travelling lease, each a way out now: every local verb moves the remote chain
 * first (a child of the record read, never forced), then the machine. Two machines are two daemons
 * with their own state dirs and clones, sharing one bare remote.
 */
let machineA: DaemonProcess;
let machineB: DaemonProcess;
const dirA = machineStateDir();
const dirB = machineStateDir();

beforeAll(async () => {
  [machineA, machineB] = await Promise.all([startDaemon(dirA), startDaemon(dirB)]);
});
afterAll(async () => {
  await Promise.all([machineA.stop(), machineB.stop()]);
});

const on = (machine: DaemonProcess, args: string[], repo: string) => cli(machine.stateDir, [...args, '--json'], repo);
type Record = { state: string; holder: { executor: string; token: number } | null; last_token: number };

/** A cycle offered by machine A through `origin`. */
async function offered() {
  const { a, b, remote } = twoClones();
  writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
  const now = await on(machineA, ['now', '--no-wait'], a);
  expect(now.json.code).toBe('handoff_ready');
  const cycle = (now.json.data?.['cycle'] as { id: string }).id;
  const ref = `refs/handoff/lease/${cycle}`;
  const record = () => JSON.parse(git(remote, 'show', `${ref}:lease.json`)) as Record;
  return { a, b, remote, cycle, ref, record };
}

async function taken() {
  const offer = await offered();
  const accepted = await on(machineB, ['accept', offer.cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout'], offer.b);
  expect(accepted.json.code).toBe('accepted');
  return { ...offer, token: Number(accepted.json.data?.['token']) };
}

const status = async (machine: DaemonProcess, repo: string) => (await on(machine, ['status'], repo)).json.data ?? {};

describe('a travelling offer can be withdrawn', () => {
  it('cancel of an offer nobody took pushes `withdrawn`, goes back to NORMAL, and a later accept is refused saying so', async () => {
    const { a, b, cycle, record } = await offered();
    const cancelled = await on(machineA, ['cancel'], a);
    expect(cancelled.json).toMatchObject({ code: 'cancelled', data: { state: 'NORMAL', cycle } });
    expect(record()).toMatchObject({ state: 'withdrawn', holder: null });
    expect(cancelled.json.data?.['withdrawn']).toMatch(/^[0-9a-f]{40}$/);
    const late = await on(machineB, ['accept', cycle, '--from', 'origin', '--as', 'laptop-b'], b);
    expect(late.code).toBe(77);
    expect(late.json.error?.message).toContain('withdrawn');
    expect((await status(machineB, b))['state']).toBe('NORMAL');
    expect((await status(machineA, a))['state']).toBe('NORMAL');
  });

  it('a withdraw racing an accept: the remote takes exactly one, and both machines agree on it', async () => {
    for (let round = 0; round < 3; round++) {
      const { a, b, cycle, record } = await offered();
      const [cancel, accept] = await Promise.all([
        on(machineA, ['cancel'], a),
        on(machineB, ['accept', cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout'], b),
      ]);
      const wins = [cancel.json.code === 'cancelled', accept.json.code === 'accepted'];
      expect(wins.filter(Boolean), `cancel ${cancel.json.code}, accept ${accept.json.code}`).toHaveLength(1);
      if (wins[0] === true) {
        expect(record().state).toBe('withdrawn');
        expect(accept.code, JSON.stringify(accept.json)).toBe(77);
        expect((await status(machineA, a))['state']).toBe('NORMAL');
      } else {
        expect(cancel.json).toMatchObject({ code: 'lease_held' });
        expect(cancel.json.error?.message).toContain('laptop-b');
        expect(record()).toMatchObject({ state: 'taken', holder: { executor: 'laptop-b' } });
        // The loser changed nothing; it follows the remote.
        expect(await status(machineA, a)).toMatchObject({ state: 'TAKEOVER', lease: { holder: { executor: 'laptop-b' } } });
      }
    }
  });
});

describe('a travelling held lease can be broken, released and acquired', () => {
  it('a receiver that vanished is broken from the source, the lease acquired there and the cycle closed; its token is stale on its machine when it comes back', async () => {
    const { a, b, cycle, record, token } = await taken();
    await machineB.stop();
    const before = record();
    const broken = await on(machineA, ['lease', 'break', '--reason', 'laptop-b is gone'], a);
    expect(broken.json.code).toBe('lease_broken');
    expect(record()).toMatchObject({ state: 'broken', holder: null, last_token: before.last_token });
    expect(await status(machineA, a)).toMatchObject({ state: 'TAKEOVER', situation: 'TAKEOVER (no holder)', lease: { holder: null } });

    const acquired = await on(machineA, ['lease', 'acquire', '--as', 'carol'], a);
    expect(acquired.json).toMatchObject({ code: 'lease_acquired', data: { token: before.last_token + 1 } });
    expect(record()).toMatchObject({ state: 'taken', holder: { executor: 'carol', token: before.last_token + 1 } });
    const next = (await status(machineA, a))['next'] as { verb: string; command: string }[];
    expect(next[0]).toMatchObject({ verb: 'return', command: `handoff return --token ${before.last_token + 1}` });

    // The vanished machine comes back: it follows the remote, and its token is refused there too.
    machineB = await startDaemon(dirB);
    expect(await status(machineB, b)).toMatchObject({ lease: { holder: { executor: 'carol' } } });
    expect((await on(machineB, ['lease', 'renew', '--token', String(token)], b)).json.code).toBe('stale_token');

    // Carol hands the work back from the source checkout; the primary takes it back: CLOSED on both.
    writeFileSync(join(a, 'f.txt'), 'one\ntwo\nthree by carol\n');
    expect((await on(machineA, ['return', '--no-wait', '--token', String(before.last_token + 1)], a)).json.code).toBe('handoff_ready');
    expect((await status(machineA, a))['state']).toBe('RETURN_HANDOFF_READY');
    const back = await on(machineA, ['accept', cycle, '--return', '--as', 'primary'], a);
    expect(back.json).toMatchObject({ code: 'accepted', data: { state: 'CLOSED' } });
    expect((await status(machineB, b))['state']).toBe('CLOSED');
  });

  it('the holder releases; the old token is stale on both machines; a racing acquire from each machine: exactly one wins', async () => {
    const { a, b, record, token } = await taken();
    const released = await on(machineB, ['lease', 'release', '--token', String(token)], b);
    expect(released.json.code).toBe('lease_released');
    expect(record()).toMatchObject({ state: 'released', holder: null, last_token: token });
    const seen = await status(machineA, a);
    expect(seen, JSON.stringify(seen)).toMatchObject({ state: 'TAKEOVER', lease: { holder: null } });
    for (const [machine, repo] of [
      [machineA, a],
      [machineB, b],
    ] as const) {
      expect((await on(machine, ['lease', 'renew', '--token', String(token)], repo)).json.code).toBe('stale_token');
    }
    const [fromA, fromB] = await Promise.all([on(machineA, ['lease', 'acquire', '--as', 'carol'], a), on(machineB, ['lease', 'acquire', '--as', 'dave'], b)]);
    const winners = [fromA, fromB].filter((r) => r.json.code === 'lease_acquired');
    expect(winners, `${fromA.json.code} / ${fromB.json.code}`).toHaveLength(1);
    const loser = winners[0] === fromA ? fromB : fromA;
    expect(loser.json.code).toBe('lease_held');
    const winner = winners[0] === fromA ? 'carol' : 'dave';
    expect(record()).toMatchObject({ state: 'taken', holder: { executor: winner, token: token + 1 } });
    expect(await status(machineA, a)).toMatchObject({ lease: { holder: { executor: winner, token: token + 1 } } });
    expect(await status(machineB, b)).toMatchObject({ lease: { holder: { executor: winner, token: token + 1 } } });
  });

  it('an unreachable remote changes nothing; a restart restores what was acknowledged', async () => {
    const { a, remote, record, token } = await taken();
    expect((await status(machineA, a))['state']).toBe('TAKEOVER');
    const aside = `${remote}.away`;
    renameSync(remote, aside);
    try {
      const broken = await on(machineA, ['lease', 'break', '--reason', 'no network'], a);
      expect(broken.json.code).toBe('remote_unreachable');
      expect(broken.code).toBe(75);
    } finally {
      renameSync(aside, remote);
    }
    expect(record()).toMatchObject({ state: 'taken', holder: { executor: 'laptop-b', token } });
    expect((await on(machineA, ['lease', 'break', '--reason', 'laptop-b is gone'], a)).json.code).toBe('lease_broken');
    await machineA.stop();
    machineA = await startDaemon(dirA);
    expect(await status(machineA, a)).toMatchObject({ state: 'TAKEOVER', lease: { holder: null } });
    expect(record()).toMatchObject({ state: 'broken' });
  });
});

describe('an offer has no holder to move', () => {
  it('lease verbs on a travelling offer are refused with lease_travels naming accept and cancel', async () => {
    const { a, cycle } = await offered();
    const refused = await on(machineA, ['lease', 'acquire', '--as', 'intruder'], a);
    expect(refused.json).toMatchObject({ code: 'lease_travels', data: { cycle, state: 'HANDOFF_READY' } });
    expect(refused.json.error?.hint).toContain('handoff accept');
    expect(refused.json.error?.hint).toContain('handoff cancel');
    expect((await on(machineA, ['cancel'], a)).json.code).toBe('cancelled');
  });
});
