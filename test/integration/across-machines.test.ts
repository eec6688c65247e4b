import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { machineStateDir } from '../support/machine-state.js';
import { twoClones, userState } from '../support/scenario.js';

/** Two daemons with their own state dirs, clones and ports stand for two machines sharing one remote. */
let machineA: DaemonProcess;
let machineB: DaemonProcess;
let machineC: DaemonProcess;

beforeAll(async () => {
  // machineStateDir turns the periodic lease sync off: each machine learns a move made elsewhere from the status that follows it.
  [machineA, machineB, machineC] = await Promise.all([
    startDaemon(machineStateDir({ git_timeout_seconds: 5, profile: 'one-way' })),
    startDaemon(machineStateDir({ git_timeout_seconds: 5 })),
    startDaemon(machineStateDir({ git_timeout_seconds: 5 })),
  ]);
});
afterAll(async () => {
  await Promise.all([machineA.stop(), machineB.stop(), machineC.stop()]);
});

const on = (machine: DaemonProcess, args: string[], repo: string) => cli(machine.stateDir, [...args, '--json'], repo);

async function evacuateOnA(a: string): Promise<string> {
  writeFileSync(join(a, 'f.txt'), `one\nfrom A ${Math.random()}\n`);
  writeFileSync(join(a, 'notes.md'), 'untracked notes\n');
  const now = await on(machineA, ['now', '--no-wait'], a);
  expect(now.json.code).toBe('handoff_ready');
  return (now.json.data?.['cycle'] as { id: string }).id;
}

describe('the package and the lease travel through the git remote', () => {
  it('B accepts using only its clone and the remote; A sees it, freezes and names B; A’s old token is refused; the return closes on A', async () => {
    const { a, b, remote } = twoClones();
    const primary = await on(machineA, ['lease', 'acquire', '--as', 'primary'], a);
    const primaryToken = String(primary.json.data?.['token']);
    writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
    const now = await on(machineA, ['now', '--no-wait'], a);
    const cycle = (now.json.data?.['cycle'] as { id: string }).id;
    expect(git(remote, 'for-each-ref', '--format=%(refname)', 'refs/handoff/').split('\n')).toEqual([
      `refs/handoff/lease/${cycle}`,
      `refs/handoff/packages/${cycle}`,
    ]);

    // B's daemon has never heard of the cycle.
    expect((await on(machineB, ['accept', cycle, '--as', 'laptop-b'], b)).json.code).toBe('unknown_cycle');
    const accepted = await on(machineB, ['accept', cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout'], b);
    expect(accepted.code).toBe(0);
    expect(accepted.json).toMatchObject({ code: 'accepted', data: { state: 'TAKEOVER', from: 'origin', token: 2 } });
    expect(readFileSync(join(b, 'f.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(existsSync(join(b, '.session-handoff', cycle, 'manifest.json'))).toBe(true);

    const statusA = await on(machineA, ['status'], a);
    expect(statusA.json.data).toMatchObject({
      state: 'TAKEOVER',
      lease: { holder: { executor: 'laptop-b', token: 2 } },
      lease_sync: { remote: 'origin', error: null },
    });
    expect((await on(machineA, ['lease', 'renew', '--token', primaryToken], a)).code).toBe(77);
    expect((await on(machineA, ['lease', 'release', '--token', primaryToken], a)).code).toBe(77);

    writeFileSync(join(b, 'f.txt'), 'one\ntwo\nthree from B\n');
    expect((await on(machineB, ['return', '--no-wait'], b)).json.code).toBe('handoff_ready');
    expect((await on(machineA, ['status'], a)).json.data?.['state']).toBe('RETURN_HANDOFF_READY');
    const back = await on(machineA, ['accept', cycle, '--return', '--as', 'primary', '--checkout'], a);
    expect(back.json).toMatchObject({ code: 'accepted', data: { state: 'CLOSED' } });
    expect(readFileSync(join(a, 'f.txt'), 'utf8')).toBe('one\ntwo\nthree from B\n');
    expect((await on(machineB, ['status'], b)).json.data?.['state']).toBe('CLOSED');
    const chain = git(remote, 'log', '--format=%s', `refs/handoff/lease/${cycle}`).split('\n');
    expect(chain).toEqual([
      `handoff ${cycle}: lease closed to primary`,
      `handoff ${cycle}: lease return_offered to laptop-b`,
      `handoff ${cycle}: lease taken to laptop-b`,
      `handoff ${cycle}: lease offered to primary`,
    ]);
  });

  it('two receivers on two machines race for the same cycle: exactly one wins, every round', async () => {
    // 50 rounds took 275 s of a 23-minute CI suite on 2 cores (10 took 62 s); race.fault.ts races three machines
    // for one cycle too. Bounded in the regular run, the full count with SOAK=1 (or any count with HANDOFF_RACE_ROUNDS).
    const rounds = Number(process.env['HANDOFF_RACE_ROUNDS'] ?? (process.env['SOAK'] === '1' ? 50 : 5));
    const { a: first, b, remote } = twoClones();
    const c = join(tempDir('machine-c'), 'c');
    git(first, 'clone', '-q', remote, c);
    const wins = { b: 0, c: 0 };
    for (let round = 0; round < rounds; round++) {
      // Each round a fresh checkout on A hands off a new cycle of the same repository.
      const a = join(tempDir('round'), 'a');
      git(first, 'clone', '-q', remote, a);
      const cycle = await evacuateOnA(a);
      const [rb, rc] = await Promise.all([
        on(machineB, ['accept', cycle, '--from', 'origin', '--as', `b-${round}`, '--checkout'], b),
        on(machineC, ['accept', cycle, '--from', 'origin', '--as', `c-${round}`, '--checkout'], c),
      ]);
      const codes = [rb.code, rc.code].sort();
      expect(codes, `round ${round}: ${JSON.stringify([rb.json, rc.json])}`).toEqual([0, 77]);
      const [winner, loser] = rb.code === 0 ? [rb, rc] : [rc, rb];
      expect(loser.json.error?.message).toContain(String(winner.json.data?.['executor']));
      if (rb.code === 0) wins.b++;
      else wins.c++;
      // The winner ends its one-way cycle, so its checkout can take the next one.
      const winnerDir = rb.code === 0 ? b : c;
      const winnerMachine = rb.code === 0 ? machineB : machineC;
      expect((await on(winnerMachine, ['close', '--one-way'], winnerDir)).code).toBe(0);
    }
    expect(wins.b + wins.c).toBe(rounds);
    console.log(`race: ${rounds} rounds, exactly one winner each (B ${wins.b}, C ${wins.c}), 0 double grants`);
  }, 600_000);

  it('an unreachable remote during accept is a clear 75 with nothing half-written; a retry succeeds', async () => {
    const { a, b, remote } = twoClones();
    const cycle = await evacuateOnA(a);
    git(b, 'remote', 'set-url', 'origin', join(tempDir('gone'), 'nowhere.git'));
    const before = userState(b);
    const failed = await on(machineB, ['accept', cycle, '--from', 'origin', '--as', 'b'], b);
    expect(failed.code).toBe(75);
    expect(failed.json.code).toBe('remote_unreachable');
    expect(existsSync(join(b, '.session-handoff', cycle))).toBe(false);
    expect(userState(b)).toEqual(before);
    expect((await on(machineB, ['status'], b)).json.data?.['state']).toBe('NORMAL');
    git(b, 'remote', 'set-url', 'origin', remote);
    const retried = await on(machineB, ['accept', cycle, '--from', 'origin', '--as', 'b', '--checkout'], b);
    expect(retried.json.code).toBe('accepted');
  });

  it('`handoff now` answers with the lease as its publish step read it back; the status after it reads the remote again', async () => {
    const { a, b } = twoClones();
    writeFileSync(join(a, 'f.txt'), 'one\nread back\n');
    const now = await on(machineA, ['now', '--no-wait'], a);
    const ready = now.json.data as { cycle: { id: string; drain: { steps: { publish: { at: string } } } }; lease_sync: unknown };
    const publishedAt = ready.cycle.drain.steps.publish.at;
    // Verified when the publish step listed the refs it pushed: the answer did not wait on a second read.
    expect(ready.lease_sync).toEqual({ remote: 'origin', verified_at: publishedAt, unverified_since: null, error: null });
    expect((await on(machineB, ['accept', ready.cycle.id, '--from', 'origin', '--as', 'b', '--checkout'], b)).code).toBe(0);
    const after = (await on(machineA, ['status'], a)).json.data as { state: string; lease_sync: { verified_at: string } };
    expect(after.state).toBe('TAKEOVER');
    expect(after.lease_sync.verified_at > publishedAt).toBe(true);
  });

  it('a source that cannot reach the remote says its lease is unverified, and since when', async () => {
    const { a, b, remote } = twoClones();
    const cycle = await evacuateOnA(a);
    expect((await on(machineB, ['accept', cycle, '--from', 'origin', '--as', 'b', '--checkout'], b)).code).toBe(0);
    git(a, 'remote', 'set-url', 'origin', join(tempDir('gone'), 'nowhere.git'));
    const offline = await on(machineA, ['status'], a);
    expect(offline.json.data).toMatchObject({ state: 'HANDOFF_READY', lease_sync: { remote: 'origin', unverified_since: expect.any(String) } });
    expect(String((offline.json.data?.['lease_sync'] as { error: string }).error)).toMatch(/cannot be read/);
    git(a, 'remote', 'set-url', 'origin', remote);
    const online = await on(machineA, ['status'], a);
    expect(online.json.data).toMatchObject({ state: 'TAKEOVER', lease: { holder: { executor: 'b' } }, lease_sync: { unverified_since: null, error: null } });
  });
});
