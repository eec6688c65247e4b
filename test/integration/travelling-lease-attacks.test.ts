import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { forge, offeredBy, on, stateDir, status, takenBy } from './travelling-scenes.js';

/**
 * Attacks on the travelling lease (refs/handoff/lease/<cycle>) by someone who can push to the remote,
 * by another machine and by racing operators. Two machines are two daemons with their own state dirs and
 * clones of one bare remote. Periodic lease sync is off (a day), so every follow is one a command asked for.
 */
let machineA: DaemonProcess;
let machineB: DaemonProcess;

beforeAll(async () => {
  [machineA, machineB] = await Promise.all([startDaemon(stateDir()), startDaemon(stateDir())]);
});
afterAll(async () => {
  await Promise.all([machineA.stop(), machineB.stop()]);
});

const offered = (source: DaemonProcess = machineA) => offeredBy(source);
const taken = (source: DaemonProcess = machineA) => takenBy(source, machineB);

describe('records forged on the remote are checked before use', () => {
  it('a malformed head (wrong cycle, schema_version, extra field, huge executor, unknown state, no JSON, no lease.json, 66 files) is refused on both machines: nothing moves, status says since when, and the daemons keep answering', async () => {
    const { a, b, remote, ref, head, record, push, token } = await taken();
    const good = head();
    const other = `20200101T000000Z-aaaaaa`;
    const attacks: [string, () => string][] = [
      ['wrong cycle', () => push({ cycle: other, holder: { executor: 'mallory', token: token + 1 }, last_token: token + 1 })],
      ['schema_version 2', () => push({ schema_version: 2, holder: { executor: 'mallory', token: token + 1 }, last_token: token + 1 })],
      ['extra field', () => push((r) => ({ ...r, holder: { executor: 'mallory', token: token + 1 }, last_token: token + 1, admin: true }))],
      ['huge executor', () => push({ holder: { executor: 'm'.repeat(100_000), token: token + 1 }, last_token: token + 1 })],
      ['state outside the chain', () => push({ state: 'owned' })],
      ['not JSON', () => forge(remote, ref, { 'lease.json': '{"state": "taken", ' }, [good])],
      ['no lease.json, another file', () => forge(remote, ref, { 'other.json': 'x' }, [good])],
      [
        '66 files',
        () =>
          forge(
            remote,
            ref,
            { 'lease.json': `${JSON.stringify(record())}\n`, ...Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`f${i}`, String(i)])) },
            [good],
          ),
      ],
    ];
    for (const [index, [name, attack]] of attacks.entries()) {
      attack();
      // Both machines read through the same check: the receiver is asked for the first two only (runtime).
      for (const [machine, repo] of index < 2
        ? ([
            [machineA, a],
            [machineB, b],
          ] as const)
        : ([[machineA, a]] as const)) {
        const seen = await status(machine, repo);
        expect(seen, `${name}: ${JSON.stringify(seen['lease_sync'])}`).toMatchObject({
          state: 'TAKEOVER',
          lease: { holder: { executor: 'laptop-b', token } },
          lease_sync: { error: expect.stringContaining('refused') as unknown, unverified_since: expect.any(String) as unknown },
        });
      }
      git(remote, 'update-ref', ref, good);
    }
    // A move of the chain is refused while its head cannot be read: nothing is pushed over the forged record.
    const forged = push({ schema_version: 2 });
    expect((await on(machineA, ['lease', 'break', '--reason', 'x'], a)).json.code).toBe('corrupt_record');
    expect(head()).toBe(forged);
    git(remote, 'update-ref', ref, good);
    expect((await on(machineB, ['lease', 'renew', '--token', String(token)], b)).json.code).toBe('lease_renewed');
    expect(await status(machineA, a)).toMatchObject({ lease_sync: { error: null, unverified_since: null } });
  });
});

describe('forged records that are well-formed moves', () => {
  it("a forged `broken` that lowers last_token is refused (the chain's judge): the holder stays, no acquire reuses a token", async () => {
    const { a, push, record, token } = await taken();
    push({ state: 'broken', holder: null, last_token: 0 });
    expect(await status(machineA, a)).toMatchObject({
      lease: { holder: { executor: 'laptop-b', token } },
      lease_sync: { error: expect.stringContaining('lowers last_token') as unknown },
    });
    const acquired = await on(machineA, ['lease', 'acquire', '--as', 'carol'], a);
    expect(acquired.json.code).toBe('lease_held');
    expect(record()).toMatchObject({ state: 'broken', last_token: 0 });
  });

  it('a forged `withdrawn` over a taken lease, or a forged `return_offered` whose package is not on the remote, moves nothing: both machines keep the holder, no RETURN_HANDOFF_READY', async () => {
    const { a, b, head, push, ref, remote, token } = await taken();
    const good = head();
    push({ state: 'withdrawn', holder: null });
    for (const [machine, repo] of [
      [machineA, a],
      [machineB, b],
    ] as const)
      expect(await status(machine, repo)).toMatchObject({ state: 'TAKEOVER', lease: { holder: { executor: 'laptop-b', token } } });
    // The forged chain is refused and unverified: with guard_when_lease_unverified `refuse`, so is the renew (it says why).
    const renewed = await on(machineB, ['lease', 'renew', '--token', String(token)], b);
    expect({ code: renewed.json.code, message: renewed.json.error?.message }).toMatchObject({
      code: 'remote_unreachable',
      message: expect.stringContaining('is refused') as unknown,
    });
    git(remote, 'update-ref', ref, good);
    push((r) => ({ ...r, state: 'return_offered', manifest: { path: 'return/manifest.json', sha256: 'a'.repeat(64) } }));
    for (const [machine, repo] of [
      [machineA, a],
      [machineB, b],
    ] as const)
      expect(await status(machine, repo)).toMatchObject({
        state: 'TAKEOVER',
        lease: { holder: { executor: 'laptop-b', token } },
        lease_sync: { error: expect.stringContaining('refused') as unknown },
      });
  });
});

describe('an offer under attack', () => {
  it('an accept from a remote or executor named like an option runs nothing; a forged `withdrawn` ends the offer as a cancel would: the checkpoint stays on the remote and here, the work tree is untouched', async () => {
    const { a, b, remote, cycle, push } = await offered();
    const canary = join(tempDir('canary'), 'ran');
    expect((await on(machineB, ['accept', cycle, '--from', `--upload-pack=touch ${canary}`, '--as', 'x'], b)).code).not.toBe(0);
    expect((await on(machineB, ['accept', cycle, '--from', 'origin', '--as', '--upload-pack=x'], b)).code).not.toBe(0);
    expect(existsSync(canary)).toBe(false);
    expect(await status(machineA, a)).toMatchObject({ state: 'HANDOFF_READY' });
    push({ state: 'withdrawn', holder: null });
    expect(await status(machineA, a)).toMatchObject({ state: 'NORMAL' });
    const branch = `refs/heads/handoff/${cycle}`;
    const checkpoint = git(remote, 'rev-parse', branch);
    expect(git(a, 'for-each-ref', '--format=%(objectname)', branch)).toBe(checkpoint);
    expect(git(a, 'status', '--porcelain')).toContain('f.txt');
    expect(git(remote, 'show', `${checkpoint}:f.txt`)).toBe('one\ntwo');
  });
});

describe('racing operators', () => {
  it('break on the source vs return from the holder: the remote takes one, and both machines agree on it', async () => {
    const { a, b, record, token } = await taken();
    writeFileSync(join(b, 'f.txt'), 'one\ntwo\nthree by b\n');
    const [broken, back] = await Promise.all([
      on(machineA, ['lease', 'break', '--reason', 'race'], a),
      on(machineB, ['return', '--no-wait', '--token', String(token)], b),
    ]);
    const seenA = await status(machineA, a);
    const seenB = await status(machineB, b);
    if (record().state === 'broken') {
      expect(broken.json.code).toBe('lease_broken');
      expect(back.json.code, JSON.stringify(back.json)).not.toBe('handoff_ready');
      expect(seenA).toMatchObject({ state: 'TAKEOVER', lease: { holder: null } });
      expect(seenB).toMatchObject({ state: 'TAKEOVER', lease: { holder: null } });
    } else {
      expect(record().state).toBe('return_offered');
      expect(back.json.code).toBe('handoff_ready');
      expect(broken.json.code, JSON.stringify(broken.json)).not.toBe('lease_broken');
      expect(seenA['state']).toBe('RETURN_HANDOFF_READY');
      expect(seenB['state']).toBe('RETURN_HANDOFF_READY');
    }
  });

  it('release by the holder vs break on the source: one record on the remote, both machines free, the token stale on both', async () => {
    const { a, b, record, token } = await taken();
    const [released, broken] = await Promise.all([
      on(machineB, ['lease', 'release', '--token', String(token)], b),
      on(machineA, ['lease', 'break', '--reason', 'race'], a),
    ]);
    const winner = record().state;
    expect(['released', 'broken']).toContain(winner);
    expect(released.json.code === 'lease_released', JSON.stringify([released.json, broken.json])).toBe(winner === 'released');
    expect(broken.json.code === 'lease_broken').toBe(winner === 'broken');
    expect(record()).toMatchObject({ holder: null, last_token: token });
    for (const [machine, repo] of [
      [machineA, a],
      [machineB, b],
    ] as const) {
      expect(await status(machine, repo)).toMatchObject({ state: 'TAKEOVER', lease: { holder: null } });
      expect((await on(machine, ['lease', 'renew', '--token', String(token)], repo)).json.code).toBe('stale_token');
    }
  });

  it("after a break the stale holder's release is refused (77); acquire vs acquire on the two machines: one wins, one token, both machines agree", async () => {
    const { a, b, record, token } = await taken();
    expect((await on(machineA, ['lease', 'break', '--reason', 'gone'], a)).json.code).toBe('lease_broken');
    const late = await on(machineB, ['lease', 'release', '--token', String(token)], b);
    expect(late.code, JSON.stringify(late.json)).toBe(77);
    expect(record()).toMatchObject({ state: 'broken', holder: null, last_token: token });
    const [fromA, fromB] = await Promise.all([on(machineA, ['lease', 'acquire', '--as', 'carol'], a), on(machineB, ['lease', 'acquire', '--as', 'dave'], b)]);
    const codes = [fromA.json.code, fromB.json.code].sort();
    expect(codes).toEqual(['lease_acquired', 'lease_held']);
    const winner = fromA.json.code === 'lease_acquired' ? 'carol' : 'dave';
    expect(record()).toMatchObject({ state: 'taken', holder: { executor: winner, token: token + 1 } });
    for (const [machine, repo] of [
      [machineA, a],
      [machineB, b],
    ] as const)
      expect(await status(machine, repo)).toMatchObject({ lease: { holder: { executor: winner, token: token + 1 } } });
  });
});
