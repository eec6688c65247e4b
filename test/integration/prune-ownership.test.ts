import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, stateDirWith, type DaemonProcess } from '../support/daemon.js';
import { git } from '../support/git.js';
import { hook, twoClones } from '../support/scenario.js';

/** Two daemons with their own state dirs stand for two machines sharing one bare remote. */
let machineA: DaemonProcess;
let machineB: DaemonProcess;

beforeAll(async () => {
  [machineA, machineB] = await Promise.all([startDaemon(stateDirWith({ git_timeout_seconds: 10 })), startDaemon(stateDirWith({ git_timeout_seconds: 10 }))]);
});
afterAll(async () => {
  await Promise.all([machineA.stop(), machineB.stop()]);
});

const on = (machine: DaemonProcess, args: string[], repo: string) => cli(machine.stateDir, [...args, '--json'], repo);
/** Every handoff-looking ref a repository holds (look-alikes included), name → sha. */
const refsOf = (dir: string) => git(dir, 'for-each-ref', '--format=%(refname) %(objectname)');
const cycleOf = (json: { data: Record<string, unknown> | null }) => (json.data?.['cycle'] as { id: string }).id;

interface Pruned {
  kept_foreign: string[];
  cycles: { cycle: string; local: { ref: string; fate: string; why?: string }[]; remote: { ref: string; fate: string; why?: string }[] }[];
}

describe('prune removes only what this repository proves finished (issue 33 item 3, issue 32 point 2)', () => {
  it("a read-only verify of another machine's offer never makes its refs prunable: the remote keeps them", async () => {
    const { a, b, remote } = twoClones();
    writeFileSync(join(b, 'f.txt'), 'one\nfrom B\n');
    const offered = await on(machineB, ['now', '--no-wait'], b);
    expect(offered.json.code).toBe('handoff_ready');
    const cycle = cycleOf(offered.json);
    const onRemote = refsOf(remote);
    expect(onRemote).toContain(`refs/handoff/lease/${cycle}`);

    const verified = await on(machineA, ['verify', cycle, '--from', 'origin'], a);
    expect(verified.json.code, JSON.stringify(verified.json.error)).not.toBe('');
    expect(refsOf(a)).toContain(`refs/handoff/lease/${cycle}`);

    const pruned = await on(machineA, ['prune', '--remote', 'origin'], a);
    expect([pruned.code, pruned.json.code]).toEqual([0, 'ok']);
    expect((pruned.json.data as unknown as Pruned).kept_foreign).toEqual([cycle]);
    expect(refsOf(remote)).toBe(onRemote);
    // B's offer still stands for whoever accepts it.
    expect((await on(machineB, ['status'], b)).json.data?.['state']).toBe('HANDOFF_READY');
  });

  it("a return never taken back keeps its -return branch through the receiver's prune", async () => {
    const { a, b, remote } = twoClones();
    writeFileSync(join(a, 'f.txt'), 'one\nfrom A\n');
    const cycle = cycleOf((await on(machineA, ['now', '--no-wait'], a)).json);
    expect((await on(machineA, ['accept', cycle, '--as', 'receiver', '--checkout'], b)).json.code).toBe('accepted');
    // The return cannot be published: the receiver gives the leg up and closes the cycle one-way.
    hook(remote, 'pre-receive', 'echo "no return branches" >&2; exit 1');
    writeFileSync(join(b, 'done.md'), 'finished by B, never taken back\n');
    expect((await on(machineA, ['return', '--no-wait'], b)).json.code).toBe('drain_blocked');
    expect((await on(machineA, ['cancel'], b)).json.code).toBe('cancelled');
    expect((await on(machineA, ['close', '--one-way'], b)).json.code).toBe('ok');
    const held = `refs/heads/handoff/${cycle}-return`;
    const work = git(b, 'rev-parse', held);

    for (const [machine, repo] of [
      [machineA, b],
      [machineA, a],
    ] as const) {
      const pruned = await on(machine, ['prune'], repo);
      expect([pruned.code, pruned.json.code]).toEqual([0, 'ok']);
    }
    expect(git(b, 'rev-parse', held)).toBe(work);
    expect(git(b, 'show', `${held}:done.md`)).toBe('finished by B, never taken back');
  });

  it('a look-alike tag on the remote neither blocks prune nor is deleted; the colliding name is said (issue 33 item 13)', async () => {
    const { a, remote } = twoClones();
    writeFileSync(join(a, 'f.txt'), 'one\ncancelled\n');
    const cycle = cycleOf((await on(machineA, ['now', '--no-wait'], a)).json);
    expect((await on(machineA, ['cancel'], a)).json.code).toBe('cancelled');
    const branch = `refs/heads/handoff/${cycle}`;
    const decoy = `refs/tags/${branch}`;
    git(a, 'push', '-q', remote, `${git(a, 'rev-parse', branch)}:${decoy}`);

    const pruned = await on(machineA, ['prune', '--remote', 'origin'], a);
    expect([pruned.code, pruned.json.code], JSON.stringify(pruned.json.error)).toEqual([0, 'ok']);
    const there = (pruned.json.data as unknown as Pruned).cycles.find((c) => c.cycle === cycle)?.remote ?? [];
    expect(there.find((r) => r.ref === branch)).toMatchObject({ fate: 'kept_look_alike', why: expect.stringContaining(decoy) as unknown });
    expect(there.filter((r) => r.ref !== branch).map((r) => r.fate)).toEqual(['removed', 'removed']);
    const left = refsOf(remote);
    expect(left).toContain(`${decoy} `);
    expect(left).toContain(`${branch} `);
    expect(left).not.toContain(`refs/handoff/lease/${cycle}`);
    // Kept here as well, so the next prune still names it there; the text says why.
    expect(refsOf(a)).toContain(`${branch} `);
    const text = await cli(machineA.stateDir, ['prune', '--remote', 'origin', '--dry-run'], a);
    expect(text.stdout).toContain('kept: look-alike on the remote');
    expect(text.stdout).toContain(decoy);
  });

  it("a look-alike of the lease ref on the remote makes an accept a refusal that names it, never 'unreachable'; the lease stays on offer", async () => {
    const { a, b, remote } = twoClones();
    writeFileSync(join(b, 'f.txt'), 'one\nfrom B\n');
    const cycle = cycleOf((await on(machineB, ['now', '--no-wait'], b)).json);
    const lease = `refs/handoff/lease/${cycle}`;
    const offered = git(remote, 'rev-parse', lease);
    git(remote, 'update-ref', `refs/${lease}`, offered);

    const accepted = await on(machineA, ['accept', cycle, '--from', 'origin', '--as', 'laptop-a', '--checkout'], a);
    expect([accepted.code, accepted.json.code]).toEqual([77, 'remote_refused']);
    expect(accepted.json.error?.message, accepted.json.error?.message).toContain(`refs/${lease}`);
    expect(git(remote, 'rev-parse', lease)).toBe(offered);
    expect((await on(machineB, ['status'], b)).json.data?.['state']).toBe('HANDOFF_READY');
  });
});
