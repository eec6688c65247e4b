import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git } from '../support/git.js';
import { twoClones } from '../support/scenario.js';
import { machineStateDir } from '../support/machine-state.js';

/**
 * A receiver on machine B handed the work back through the remote (RETURN_HANDOFF_READY, the chain at
 * `return_offered`) and the primary's machine A is gone for good: `handoff cancel` on B withdraws the
 * return there (a `taken` record: the same holder, the same token), so B holds the lease again and can
 * close one-way. Two machines are two daemons with their own state dirs and clones, sharing one bare remote.
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
const status = async (machine: DaemonProcess, repo: string) => (await on(machine, ['status'], repo)).json.data ?? {};

/** A cycle offered by A, taken by B through `origin`, and handed back by B: B is RETURN_HANDOFF_READY. */
async function returned() {
  const { a, b, remote } = twoClones();
  writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
  const now = await on(machineA, ['now', '--no-wait'], a);
  expect(now.json.code).toBe('handoff_ready');
  const cycle = (now.json.data?.['cycle'] as { id: string }).id;
  const ref = `refs/handoff/lease/${cycle}`;
  const record = () => JSON.parse(git(remote, 'show', `${ref}:lease.json`)) as Record;
  /** The states of the chain's records, oldest first. */
  const chain = () =>
    git(remote, 'rev-list', '--reverse', '--first-parent', ref)
      .trim()
      .split('\n')
      .map((commit) => (JSON.parse(git(remote, 'show', `${commit}:lease.json`)) as Record).state);
  const accepted = await on(machineB, ['accept', cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout'], b);
  expect(accepted.json.code).toBe('accepted');
  const token = Number(accepted.json.data?.['token']);
  writeFileSync(join(b, 'f.txt'), 'one\ntwo\nthree by b\n');
  const back = await on(machineB, ['return', '--no-wait', '--token', String(token)], b);
  expect(back.json.code, JSON.stringify(back.json)).toBe('handoff_ready');
  const waiting = await status(machineB, b);
  expect(waiting['state']).toBe('RETURN_HANDOFF_READY');
  // Wait for the primary first; if it will not come, the holder withdraws its return.
  expect((waiting['next'] as { verb: string }[]).map((step) => step.verb)).toEqual(['wait', 'cancel']);
  expect(record()).toMatchObject({ state: 'return_offered', holder: { executor: 'laptop-b', token } });
  return { a, b, remote, cycle, record, chain, token };
}

describe('a return on offer through the remote can be withdrawn by its holder', () => {
  it('the primary is gone for good: cancel on B holds the lease again (same holder and token), close --one-way ends it; a restart restores it', async () => {
    const { b, record, chain, token } = await returned();
    const before = record();
    await machineA.stop();
    try {
      const cancelled = await on(machineB, ['cancel', '--reason', 'the primary machine is gone'], b);
      expect(cancelled.json, JSON.stringify(cancelled.json)).toMatchObject({ code: 'cancelled', data: { state: 'TAKEOVER', leg: 'return' } });
      expect(cancelled.json.data?.['withdrawn']).toMatch(/^[0-9a-f]{40}$/);
      expect(existsSync(String(cancelled.json.data?.['record']))).toBe(true);
      expect(record()).toMatchObject({ state: 'taken', holder: { executor: 'laptop-b', token }, last_token: before.last_token });
      const seen = await status(machineB, b);
      expect(seen).toMatchObject({ state: 'TAKEOVER', situation: 'TAKEOVER (held)', lease: { holder: { executor: 'laptop-b', token } } });
      expect((seen['next'] as { verb: string }[]).map((step) => step.verb)).toContain('close --one-way');

      // A restart of B replays the cancel from its journal.
      await machineB.stop();
      machineB = await startDaemon(dirB);
      expect(await status(machineB, b)).toMatchObject({ state: 'TAKEOVER', situation: 'TAKEOVER (held)' });

      const closed = await on(machineB, ['close', '--one-way', '--token', String(token)], b);
      expect(closed.code, JSON.stringify(closed.json)).toBe(0);
      expect((await status(machineB, b))['state']).toBe('CLOSED');
      expect(chain().slice(-3)).toEqual(['return_offered', 'taken', 'closed']);
    } finally {
      machineA = await startDaemon(dirA);
    }
  });

  it('the primary, alive, follows the withdrawal to TAKEOVER (held on B), its accept --return is refused naming B, and a second return is taken back', async () => {
    const { a, b, cycle, record, token } = await returned();
    expect((await status(machineA, a))['state']).toBe('RETURN_HANDOFF_READY');
    expect((await on(machineB, ['cancel'], b)).json.code).toBe('cancelled');
    const followed = await status(machineA, a);
    expect(followed).toMatchObject({ state: 'TAKEOVER', situation: 'TAKEOVER (held)', lease: { holder: { executor: 'laptop-b', token } } });
    expect((followed['next'] as { verb: string }[])[0]?.verb).toBe('wait');
    const late = await on(machineA, ['accept', cycle, '--return', '--as', 'primary'], a);
    expect(late.json.code, JSON.stringify(late.json)).toBe('lease_held');
    expect(late.json.error?.message).toContain('laptop-b');
    expect(record()).toMatchObject({ state: 'taken', holder: { executor: 'laptop-b', token } });

    writeFileSync(join(b, 'f.txt'), 'one\ntwo\nthree by b, again\n');
    expect((await on(machineB, ['return', '--no-wait', '--token', String(token)], b)).json.code).toBe('handoff_ready');
    expect((await status(machineA, a))['state']).toBe('RETURN_HANDOFF_READY');
    const taken = await on(machineA, ['accept', cycle, '--return', '--as', 'primary'], a);
    expect(taken.json, JSON.stringify(taken.json)).toMatchObject({ code: 'accepted', data: { state: 'CLOSED' } });
    expect((await status(machineB, b))['state']).toBe('CLOSED');
  });

  // Three full cycles across two daemons (≈ 11 s each alone): the deadline is the rounds' work, not the default 30 s.
  it('a cancel on B racing accept --return on A: the remote takes exactly one, and both machines agree on it', { timeout: 180_000 }, async () => {
    for (let round = 0; round < 3; round++) {
      const { a, b, cycle, record, token } = await returned();
      expect((await status(machineA, a))['state']).toBe('RETURN_HANDOFF_READY');
      const [cancel, accept] = await Promise.all([on(machineB, ['cancel'], b), on(machineA, ['accept', cycle, '--return', '--as', 'primary'], a)]);
      const wins = [cancel.json.code === 'cancelled', accept.json.code === 'accepted'];
      expect(wins.filter(Boolean), `cancel ${cancel.json.code}, accept ${accept.json.code}`).toHaveLength(1);
      if (wins[0] === true) {
        expect(accept.json.code, JSON.stringify(accept.json)).toBe('lease_held');
        expect(record()).toMatchObject({ state: 'taken', holder: { executor: 'laptop-b', token } });
        expect(await status(machineA, a)).toMatchObject({ state: 'TAKEOVER', lease: { holder: { executor: 'laptop-b', token } } });
        expect(await status(machineB, b)).toMatchObject({ state: 'TAKEOVER', situation: 'TAKEOVER (held)' });
      } else {
        expect(cancel.json.code, JSON.stringify(cancel.json)).toBe('lease_held');
        expect(cancel.json.error?.message).toContain('primary');
        expect(record()).toMatchObject({ state: 'closed', holder: { executor: 'primary' } });
        expect((await status(machineA, a))['state']).toBe('CLOSED');
        expect((await status(machineB, b))['state']).toBe('CLOSED');
      }
    }
  });

  it('an unreachable remote changes nothing: B stays RETURN_HANDOFF_READY and the return stays on offer', async () => {
    const { b, remote, record, token } = await returned();
    const aside = `${remote}.away`;
    renameSync(remote, aside);
    try {
      const refused = await on(machineB, ['cancel'], b);
      expect(refused.json.code, JSON.stringify(refused.json)).toBe('remote_unreachable');
      expect(refused.code).toBe(75);
    } finally {
      renameSync(aside, remote);
    }
    expect(record()).toMatchObject({ state: 'return_offered', holder: { executor: 'laptop-b', token } });
    expect((await status(machineB, b))['state']).toBe('RETURN_HANDOFF_READY');
  });
});
