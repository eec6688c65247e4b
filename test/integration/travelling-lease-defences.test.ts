import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { twoClones } from '../support/scenario.js';
import { forge, offeredBy, on, stateDir, status, takenBy, type LeaseRecord } from './travelling-scenes.js';

/**
 * Defences of the travelling lease, each an attack that succeeded on c6cb948 (found by an attacker
 * helper; all 15 failed there). Attacks on the travelling lease (refs/handoff/lease/<cycle>) by someone who can push to the remote,
 * by another machine and by racing operators. Two machines are two daemons with their own state dirs and
 * clones of one bare remote. Periodic lease sync is off (a day), so every follow is one a command asked for.
 */
let machineA: DaemonProcess;
let machineB: DaemonProcess;
/** A source whose cycles are one-way, with a short git timeout (a push whose answer is lost). */
let machineC: DaemonProcess;

beforeAll(async () => {
  [machineA, machineB, machineC] = await Promise.all([
    startDaemon(stateDir()),
    startDaemon(stateDir()),
    startDaemon(stateDir({ profile: 'one-way', git_timeout_seconds: 2 })),
  ]);
});
afterAll(async () => {
  await Promise.all([machineA.stop(), machineB.stop(), machineC.stop()]);
});

const offered = (source: DaemonProcess = machineA) => offeredBy(source);
const taken = (source: DaemonProcess = machineA) => takenBy(source, machineB);

describe('`handoff cancel` withdraws an offer whose publish push reached the remote unanswered', () => {
  /** A source whose publish push lands on the remote, then hangs (post-receive) before the answer. */
  async function slowPublish(source: DaemonProcess, sleep: number) {
    const { a, b, remote } = twoClones();
    expect((await on(source, ['lease', 'acquire', '--as', 'primary'], a)).json.code).toBe('lease_acquired');
    writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
    const flag = join(tempDir('flag'), 'pushed');
    writeFileSync(join(remote, 'hooks', 'post-receive'), `#!/bin/sh\ntouch ${flag}\nsleep ${sleep}\n`);
    chmodSync(join(remote, 'hooks', 'post-receive'), 0o755);
    return {
      a,
      b,
      remote,
      flag,
      now: on(source, ['now', '--no-wait'], a),
      done: () => writeFileSync(join(remote, 'hooks', 'post-receive'), '#!/bin/sh\nexit 0\n'),
    };
  }
  const cycleOn = (remote: string) => git(remote, 'for-each-ref', '--format=%(refname:lstrip=3)', 'refs/handoff/lease/').split('\n').find(Boolean) ?? '';

  it('cancel while the push is in flight: the remote holds `withdrawn`, a receiver that then tries is refused (77)', async () => {
    const { a, b, remote, flag, now, done } = await slowPublish(machineA, 3);
    for (let i = 0; i < 400 && !existsSync(flag); i++) await new Promise((resolve) => setTimeout(resolve, 25));
    const cancel = await on(machineA, ['cancel'], a);
    await now;
    done();
    expect(cancel.json.code).toBe('cancelled');
    const cycle = cycleOn(remote);
    const accept = await on(machineB, ['accept', cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout'], b);
    const seenA = await status(machineA, a);
    // The cancel withdrew what reached the remote (`withdrawn`), so the accept is refused (lease_held, 77, naming the withdrawal).
    expect(
      { accept: accept.json.code, remote: (JSON.parse(git(remote, 'show', `refs/handoff/lease/${cycle}:lease.json`)) as LeaseRecord).state },
      `source ${String(seenA['state'])} holder ${JSON.stringify((seenA['lease'] as { holder: unknown }).holder)}`,
    ).toEqual({ accept: 'lease_held', remote: 'withdrawn' });
  });

  it('the push times out (drain blocked), the operator takes the documented way out `handoff cancel`: the offer is withdrawn on the remote', async () => {
    const { a, b, remote, now, done } = await slowPublish(machineC, 5);
    const published = await now;
    done();
    expect(published.json.code, JSON.stringify(published.json).slice(0, 300)).not.toBe('handoff_ready');
    expect((await on(machineC, ['cancel'], a)).json.code).toBe('cancelled');
    const cycle = cycleOn(remote);
    expect((JSON.parse(git(remote, 'show', `refs/handoff/lease/${cycle}:lease.json`)) as LeaseRecord).state).toBe('withdrawn');
    const accept = await on(machineB, ['accept', cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout'], b);
    // Refused: the cancel withdrew it (before the fix: accepted while the source was NORMAL with its own holder).
    expect(accept.json.code).not.toBe('accepted');
  });
});

describe('forged records that are well-formed but are not a legal move of the chain are refused', () => {
  it('token reuse: after a break, a forged `taken` giving the broken holder its old token back is refused on both machines', async () => {
    const { a, b, push, token } = await taken();
    expect((await on(machineA, ['lease', 'break', '--reason', 'laptop-b is gone'], a)).json.code).toBe('lease_broken');
    expect(await status(machineB, b)).toMatchObject({ lease: { holder: null } });
    push({ state: 'taken', holder: { executor: 'laptop-b', token }, last_token: token });
    // Expected: a holder token at or below a token already spent on this chain is refused (corrupt_record), nothing moves.
    const seenA = await status(machineA, a);
    expect(seenA['lease'], JSON.stringify(seenA['lease_sync'])).toMatchObject({ holder: null });
    expect((await on(machineB, ['lease', 'renew', '--token', String(token)], b)).json.code).toBe('stale_token');
  });

  it("token reuse: a forged `taken` of an offer with the primary's own (already issued) token is refused by the source", async () => {
    const { a, push, record } = await offered();
    expect(record()).toMatchObject({ state: 'offered', last_token: 1 });
    push({ state: 'taken', holder: { executor: 'mallory', token: 1 }, last_token: 1 });
    const seen = await status(machineA, a);
    // Expected: refused (token 1 was issued already; a take must give last_token + 1), the source still offers.
    expect(seen, JSON.stringify(seen['lease'])).toMatchObject({ state: 'HANDOFF_READY' });
  });

  it('a non-fast-forward rewrite (a forged sibling of the `taken` record, force-pushed) is refused: the receiver keeps its hold', async () => {
    const { a, b, head, remote, token } = await taken();
    const takenHead = head();
    const offerHead = git(remote, 'rev-parse', `${takenHead}^1`);
    const base = JSON.parse(git(remote, 'show', `${takenHead}:lease.json`)) as LeaseRecord;
    const ref = `refs/handoff/lease/${base.cycle}`;
    forge(
      remote,
      ref,
      { 'lease.json': `${JSON.stringify({ ...base, holder: { executor: 'mallory', token: token + 1 }, last_token: token + 1 }, null, 2)}\n` },
      [offerHead],
    );
    // Expected: a head that does not descend from the head this machine knows is refused (lease sync error), nothing moves.
    for (const [machine, repo] of [
      [machineA, a],
      [machineB, b],
    ] as const) {
      const seen = await status(machine, repo);
      expect({ lease: seen['lease'], error: (seen['lease_sync'] as { error: string | null }).error }).toMatchObject({
        lease: { holder: { executor: 'laptop-b', token } },
        error: expect.any(String) as unknown,
      });
    }
  });

  it('offered -> closed (skipping taken and the return): status names the refused chain and `handoff cancel` withdraws over it', async () => {
    const { a, push } = await offered();
    push({ state: 'closed', holder: { executor: 'mallory', token: 2 }, last_token: 2 });
    const seen = await status(machineA, a);
    expect(seen['state']).toBe('HANDOFF_READY');
    const cancel = await on(machineA, ['cancel'], a);
    // Expected: the illegal record is named in status (lease_sync.error) and the source keeps a way out.
    expect({ error: (seen['lease_sync'] as { error: string | null }).error, cancel: cancel.json.code }).toMatchObject({
      error: expect.any(String) as unknown,
      cancel: 'cancelled',
    });
  });
});

describe('illegal transitions and out-of-range tokens are neither followed nor written', () => {
  it('taken -> closed by another holder (skipping the return leg): both machines stay in TAKEOVER', async () => {
    const { a, b, push, token } = await taken();
    push({ state: 'closed', holder: { executor: 'mallory', token: token + 1 }, last_token: token + 1 });
    const seenA = await status(machineA, a);
    const seenB = await status(machineB, b);
    // Expected: a `closed` that is not a child of `return_offered` is refused (lease_sync error); both stay TAKEOVER with laptop-b.
    expect({ a: seenA['state'], b: seenB['state'] }).toEqual({ a: 'TAKEOVER', b: 'TAKEOVER' });
  });

  it('a forged `broken` with last_token = MAX_SAFE_INTEGER is refused (last_token moved without a holder): acquire refused, nothing pushed', async () => {
    const { a, push, head } = await taken();
    push({ state: 'broken', holder: null, last_token: Number.MAX_SAFE_INTEGER });
    const forged = head();
    const seen = await status(machineA, a);
    const acquired = await on(machineA, ['lease', 'acquire', '--as', 'carol'], a);
    expect({
      error: (seen['lease_sync'] as { error: string | null }).error,
      holder: (seen['lease'] as { holder: { executor: string } | null }).holder?.executor,
      code: acquired.json.code,
      head: head(),
    }).toEqual({ error: expect.stringContaining('changes last_token') as unknown, holder: 'laptop-b', code: 'lease_held', head: forged });
  });

  it('a record that fails its own schema is never pushed: a receiver claiming an offer at last_token MAX_SAFE_INTEGER is refused (token 2^53)', async () => {
    const { b, cycle, push, head } = await offered();
    push({ last_token: Number.MAX_SAFE_INTEGER });
    const forged = head();
    const accept = await on(machineB, ['accept', cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout'], b);
    expect({ code: accept.json.code, head: head() }, JSON.stringify(accept.json.error)).toEqual({ code: 'corrupt_record', head: forged });
    expect(accept.json.error?.message).toContain('fails its schema');
  });
});

describe('a stale holder asks the remote before it acts', () => {
  it("renew with the broken token is refused on the holder's machine (renew syncs first)", async () => {
    const { a, b, token } = await taken();
    expect((await on(machineA, ['lease', 'break', '--reason', 'laptop-b is gone'], a)).json.code).toBe('lease_broken');
    // No status on B in between: the agent on B only renews, as a holder does.
    const renewed = await on(machineB, ['lease', 'renew', '--token', String(token)], b);
    expect(renewed.json.code, 'expected stale_token (77): the chain says broken').toBe('stale_token');
  });

  it('a broken holder cannot start a return leg with its old token (return asks the chain first); the source keeps the break', async () => {
    const { a, b, token, record } = await taken();
    expect((await on(machineA, ['lease', 'break', '--reason', 'laptop-b is gone'], a)).json.code).toBe('lease_broken');
    const returned = await on(machineB, ['return', '--token', String(token), '--no-wait'], b);
    expect({ code: returned.json.code, remote: record().state }, JSON.stringify(returned.json.error)).toEqual({ code: 'stale_token', remote: 'broken' });
  });

  it('one-way: a broken holder cannot close its cycle with the stale token (the close is judged on the chain)', async () => {
    const { a, b, record, token } = await taken(machineC);
    expect((await on(machineC, ['lease', 'break', '--reason', 'laptop-b is gone'], a)).json.code).toBe('lease_broken');
    expect((await on(machineC, ['lease', 'acquire', '--as', 'carol'], a)).json.code).toBe('lease_acquired');
    expect(record()).toMatchObject({ state: 'taken', holder: { executor: 'carol', token: token + 1 } });
    const closed = await on(machineB, ['close', '--one-way', '--token', String(token)], b);
    const seenB = await status(machineB, b);
    expect({ close: closed.json.code, state: seenB['state'] }, JSON.stringify(seenB['lease'])).toEqual({ close: 'stale_token', state: 'TAKEOVER' });
  });
});

describe('the primary takes a return back only from the chain it follows', () => {
  it('a return offer rewritten by force (a sibling with a forged holder) is refused at `accept --return`: the chain stays, the primary waits', async () => {
    const { a, b, remote, head, ref } = await taken();
    writeFileSync(join(b, 'f.txt'), 'one\ntwo\nthree from B\n');
    expect((await on(machineB, ['return', '--no-wait'], b)).json.code).toBe('handoff_ready');
    expect((await status(machineA, a))['state']).toBe('RETURN_HANDOFF_READY');
    const returned = head();
    const base = JSON.parse(git(remote, 'show', `${returned}:lease.json`)) as LeaseRecord;
    const forged = forge(remote, ref, { 'lease.json': `${JSON.stringify({ ...base, holder: { executor: 'mallory', token: base.last_token } }, null, 2)}\n` }, [
      git(remote, 'rev-parse', `${returned}^1`),
    ]);
    const back = await on(machineA, ['accept', base.cycle, '--return', '--as', 'primary'], a);
    expect({ code: back.json.code, head: head() }, JSON.stringify(back.json.error)).toEqual({ code: 'corrupt_record', head: forged });
    expect(back.json.error?.message).toContain('does not descend');
  });
});

describe('a one-way close travels', () => {
  it('after a receiver closes one-way, the source follows the `closed` record to CLOSED', async () => {
    const { a, b, token } = await taken(machineC);
    expect((await on(machineB, ['close', '--one-way', '--token', String(token)], b)).json.code).toBe('ok');
    expect((await status(machineB, b))['state']).toBe('CLOSED');
    const seen = await status(machineC, a);
    // Expected: the close is written to the chain (`closed`) and the source follows it to CLOSED.
    expect(seen['state'], JSON.stringify(seen['next'])).toBe('CLOSED');
  });
});

describe('the write-through is read back', () => {
  it('with remote.origin.pushurl elsewhere (repository config), `lease break` is refused: the remote records are read from never moved, nothing moves', async () => {
    const { a, b, record } = await taken();
    const mirror = join(tempDir('mirror'), 'm.git');
    git(tempDir('x'), 'clone', '-q', '--mirror', git(a, 'remote', 'get-url', 'origin'), mirror);
    git(a, 'config', 'remote.origin.pushurl', mirror);
    const broken = await on(machineA, ['lease', 'break', '--reason', 'laptop-b is gone'], a);
    const seenA = await status(machineA, a);
    const seenB = await status(machineB, b);
    // The push is verified by reading the ref back where reads come from: not there, so nothing moved anywhere.
    expect({ code: broken.json.code, remote: record().state, a: seenA['lease'], b: seenB['lease'] }, JSON.stringify(broken.json.error)).toMatchObject({
      code: 'remote_unreachable',
      remote: 'taken',
      a: { holder: { executor: 'laptop-b' } },
      b: { holder: { executor: 'laptop-b' } },
    });
    expect(broken.json.error?.message).toContain('pushurl');
  });

  it("a push the remote declines by policy (pre-receive) is answered remote_refused with the remote's reason", async () => {
    const { a, remote } = await taken();
    writeFileSync(join(remote, 'hooks', 'pre-receive'), '#!/bin/sh\necho "policy: refs/handoff is protected" >&2\nexit 1\n');
    chmodSync(join(remote, 'hooks', 'pre-receive'), 0o755);
    const broken = await on(machineA, ['lease', 'break', '--reason', 'x'], a);
    // A refusal that names the remote's own reason (not another machine's move).
    expect(broken.json.code).toBe('remote_refused');
    expect(broken.json.error?.message ?? '', JSON.stringify(broken.json)).toContain('policy: refs/handoff is protected');
  });
});

describe('a push whose answer is lost is read back', () => {
  it('acquire whose push answer is lost answers what the remote holds', async () => {
    const { a, b, remote, record, token } = await taken(machineC);
    expect((await on(machineC, ['lease', 'break', '--reason', 'gone'], a)).json.code).toBe('lease_broken');
    // The remote updates the ref, then keeps the pusher waiting past its timeout (git_timeout_seconds 2).
    writeFileSync(join(remote, 'hooks', 'post-receive'), '#!/bin/sh\nsleep 4\n');
    chmodSync(join(remote, 'hooks', 'post-receive'), 0o755);
    let acquired;
    try {
      acquired = await on(machineC, ['lease', 'acquire', '--as', 'carol'], a);
    } finally {
      writeFileSync(join(remote, 'hooks', 'post-receive'), '#!/bin/sh\nexit 0\n');
    }
    const after = record();
    // Expected: a push that failed without a rejection is read back before answering: the answer is the remote's truth.
    expect({ code: acquired.json.code, remote: after.state }, `${acquired.json.error?.message ?? ''} / ${JSON.stringify(after)}`).toEqual({
      code: after.state === 'taken' ? 'lease_acquired' : 'remote_unreachable',
      remote: after.state,
    });
    expect(token).toBeGreaterThan(0);
    expect(b).toBeTruthy();
  });

  it('cancel whose push answer is lost is cancelled when the remote holds `withdrawn`', async () => {
    const { a, remote, record } = await offered(machineC);
    writeFileSync(join(remote, 'hooks', 'post-receive'), '#!/bin/sh\nsleep 4\n');
    chmodSync(join(remote, 'hooks', 'post-receive'), 0o755);
    let cancel;
    try {
      cancel = await on(machineC, ['cancel'], a);
    } finally {
      writeFileSync(join(remote, 'hooks', 'post-receive'), '#!/bin/sh\nexit 0\n');
    }
    expect({ code: cancel.json.code, remote: record().state }).toEqual({ code: 'cancelled', remote: 'withdrawn' });
  });
});
