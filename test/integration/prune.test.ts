import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, sharedDaemon } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { twoClones, userState } from '../support/scenario.js';

const shared = sharedDaemon();
const run = shared.run;

async function evacuate(a: string, text: string): Promise<string> {
  writeFileSync(join(a, 'f.txt'), text);
  const now = await run(['now', '--no-wait'], a);
  expect(now.json.code).toBe('handoff_ready');
  return (now.json.data?.['cycle'] as { id: string }).id;
}

/** Every handoff ref a repository holds, name → sha. */
const handoffRefs = (dir: string) => git(dir, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads/handoff/', 'refs/handoff/');
const namesOf = (dir: string) =>
  handoffRefs(dir)
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' ')[0]);

interface Pruned {
  kept_unfinished: string[];
  cycles: { cycle: string; local: { ref: string; fate: string }[]; remote: { ref: string; fate: string }[] }[];
}

describe('handoff prune: the finished cycles leave no refs behind, the unfinished one keeps all', () => {
  it('cancelled and closed cycles go, here and on the remote; the one on offer and a checked-out branch stay; dry run and a second prune change nothing', async () => {
    const { a, b, remote } = twoClones();
    const cancelled = await evacuate(a, 'one\ncancelled\n');
    expect((await run(['cancel', '--reason', 'changed my mind'], a)).json.code).toBe('cancelled');

    const closed = await evacuate(a, 'one\nclosed\n');
    expect((await run(['accept', closed, '--as', 'emergency', '--checkout'], b)).json.code).toBe('accepted');
    expect((await run(['return', '--no-wait'], b)).json.code).toBe('handoff_ready');
    expect((await run(['accept', closed, '--return', '--as', 'primary', '--checkout'], a)).json).toMatchObject({ data: { state: 'CLOSED' } });

    const offered = await evacuate(a, 'one\noffered\n');
    // The person looks at the cancelled cycle's snapshot in a worktree of their own.
    const look = join(tempDir('look'), 'wt');
    git(a, 'worktree', 'add', '-q', look, `handoff/${cancelled}`);
    const held = `refs/heads/handoff/${cancelled}`;

    const ofCycle = (names: readonly (string | undefined)[], cycle: string) => names.filter((n) => n?.includes(cycle));
    expect(ofCycle(namesOf(a), cancelled).length + ofCycle(namesOf(a), closed).length).toBeGreaterThan(2);
    const offeredHere = ofCycle(namesOf(a), offered);
    const offeredThere = ofCycle(namesOf(remote), offered);
    expect(offeredThere.length).toBeGreaterThan(0);
    expect(ofCycle(namesOf(remote), closed).length).toBeGreaterThan(0);

    // Dry run: the same table, nothing moved anywhere.
    const [hereBefore, thereBefore, userBefore] = [handoffRefs(a), handoffRefs(remote), userState(a)];
    const dry = await run(['prune', '--remote', 'origin', '--dry-run'], a);
    expect([dry.code, dry.json.code]).toEqual([0, 'ok']);
    const planned = dry.json.data as unknown as Pruned;
    expect(planned.cycles.map((c) => c.cycle)).toEqual([cancelled, closed].sort());
    expect(planned.kept_unfinished).toEqual([offered]);
    expect(planned.cycles.flatMap((c) => c.local.map((r) => r.fate))).not.toContain('removed');
    expect([handoffRefs(a), handoffRefs(remote), userState(a)]).toEqual([hereBefore, thereBefore, userBefore]);

    const pruned = await run(['prune', '--remote', 'origin'], a);
    expect([pruned.code, pruned.json.code]).toEqual([0, 'ok']);
    const done = pruned.json.data as unknown as Pruned;
    expect(done.cycles.flatMap((c) => c.local).find((r) => r.ref === held)).toEqual({ ref: held, fate: 'kept_checked_out' });
    // Here: only the held branch and the offered cycle's refs are left; the remote: the same.
    expect(namesOf(a).sort()).toEqual([held, ...offeredHere].sort());
    expect(namesOf(remote).filter((n) => !n?.includes(offered))).toEqual(thereBefore.includes(`${held} `) ? [held] : []);
    expect(ofCycle(namesOf(remote), offered)).toEqual(offeredThere);
    expect(userState(a)).toEqual(userBefore);
    // The records stay; the offer still stands.
    expect(existsSync(join(a, '.session-handoff', closed, 'manifest.json'))).toBe(true);
    expect((await run(['status'], a)).json.data?.['state']).toBe('HANDOFF_READY');

    // The words a person reads: a table, and the kept branch said so.
    const text = await cli(shared.daemon.stateDir, ['prune', '--dry-run'], a);
    expect(text.stdout).toMatch(/^CYCLE +STARTED +WHERE +REF +WHAT$/m);
    expect(text.stdout).toContain('kept: checked out');
    expect(text.stdout).toContain(`kept ${offered}: not finished`);

    const again = await run(['prune', '--remote', 'origin'], a);
    expect((again.json.data as unknown as Pruned).cycles.flatMap((c) => c.local.filter((r) => r.fate === 'removed'))).toEqual([]);
    expect((again.json.data as unknown as Pruned).cycles.flatMap((c) => c.remote.filter((r) => r.fate === 'removed'))).toEqual([]);
  });
});
