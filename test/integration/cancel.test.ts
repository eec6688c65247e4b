import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, sharedDaemon } from '../support/daemon.js';
import { git } from '../support/git.js';
import { busyRepo, hook, userState } from '../support/scenario.js';

const shared = sharedDaemon();

describe('handoff cancel: the documented way out of a drain blocked for good (finding 8)', () => {
  it('ends a drain whose push is rejected forever: NORMAL, the cycle recorded as abandoned, the local checkpoint ref kept', async () => {
    const repo = busyRepo();
    hook(repo.remote, 'pre-receive', 'echo "policy: no handoff branches" >&2; exit 1');
    const before = userState(repo.root);
    expect((await cli(shared.daemon.stateDir, ['now', '--no-wait', '--json'], repo.root)).json.code).toBe('drain_blocked');
    const blocked = (await cli(shared.daemon.stateDir, ['status', '--json'], repo.root)).json.data as { cycle: { id: string }; next: { command: string }[] };
    const cycle = blocked.cycle.id;
    // Status names the way out next to `handoff resume`.
    expect(blocked.next.map((n) => n.command)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^handoff resume/), expect.stringMatching(/^handoff cancel/)]),
    );

    // Paused too: cancelling is a way out, not a move forward.
    await cli(shared.daemon.stateDir, ['pause', '--json'], repo.root);
    const cancelled = await cli(shared.daemon.stateDir, ['cancel', '--reason', 'the remote refuses handoff branches', '--json'], repo.root);
    expect(cancelled.code).toBe(0);
    expect(cancelled.json.code).toBe('cancelled');
    expect(cancelled.json.data).toMatchObject({ state: 'NORMAL', cycle, leg: 'out', step: 'publish', reason: 'the remote refuses handoff branches' });
    await cli(shared.daemon.stateDir, ['unpause', '--json'], repo.root);

    const status = await cli(shared.daemon.stateDir, ['status', '--json'], repo.root);
    expect(status.json.data).toMatchObject({ state: 'NORMAL', cycle: null, blocked: null });
    const record = JSON.parse(readFileSync(join(repo.root, '.session-handoff', cycle, 'abandoned.json'), 'utf8')) as Record<string, unknown>;
    expect(record).toMatchObject({ cycle, leg: 'out', step: 'publish', kept_ref: `refs/heads/handoff/${cycle}` });
    expect(String(record['blocked'])).toMatch(/rejected the push/);
    // The snapshot commit stays reachable from its local ref; nothing of the user's moved.
    expect(git(repo.root, 'rev-parse', '--verify', `refs/heads/handoff/${cycle}`)).toMatch(/^[0-9a-f]{40}$/);
    expect(userState(repo.root)).toEqual(before);

    const list = await cli(shared.daemon.stateDir, ['list', '--json'], repo.root);
    expect((list.json.data as { cycles: { cycle: string; abandoned: boolean }[] }).cycles).toContainEqual(expect.objectContaining({ cycle, abandoned: true }));
    const show = await cli(shared.daemon.stateDir, ['show', cycle, '--json'], repo.root);
    expect((show.json.data as { abandoned: unknown[] }).abandoned).toEqual([expect.objectContaining({ cycle, leg: 'out' })]);

    // Nothing left to cancel: refused with a code, nothing written.
    const again = await cli(shared.daemon.stateDir, ['cancel', '--json'], repo.root);
    expect([again.code, again.json.code]).toEqual([10, 'wrong_state']);
    expect(existsSync(join(repo.root, '.session-handoff', cycle, 'abandoned.json'))).toBe(true);
  });
});
