import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedDaemon } from '../support/daemon.js';
import { git } from '../support/git.js';
import { hook, twoClones } from '../support/scenario.js';

const shared = sharedDaemon();
const run = shared.run;
const status = async (repo: string) =>
  (await run(['status'], repo)).json.data as { state: string; situation: string; next: { verb: string; command: string | null }[] };

/** A cycle of A taken over by B (token 2), with B's work tree at the checkpoint. */
async function takenOver(travels: boolean): Promise<{ a: string; b: string; remote: string; cycle: string }> {
  const { a, b, remote } = twoClones();
  // Without a remote the lease stays on this daemon (a local checkpoint ref): it can be released and taken here.
  if (!travels) git(a, 'remote', 'remove', 'origin');
  expect((await run(['lease', 'acquire', '--as', 'primary'], a)).json.data?.['token']).toBe(1);
  writeFileSync(join(a, 'notes.md'), 'source notes\n');
  const now = await run(['now', '--no-wait'], a);
  expect(now.json.code).toBe('handoff_ready');
  const cycle = (now.json.data?.['cycle'] as { id: string }).id;
  expect((await run(['accept', cycle, '--as', 'receiver', '--checkout'], b)).json).toMatchObject({ code: 'accepted', data: { token: 2 } });
  if (!travels) git(b, 'remote', 'remove', 'origin');
  return { a, b, remote, cycle };
}

describe('the return leg, whoever holds the lease (finding 1)', () => {
  it('the receiver released the lease and someone else took it: the new holder returns with its token; the accept token stays stale', async () => {
    const { a, b, cycle } = await takenOver(false);
    expect((await run(['lease', 'release', '--token', '2'], a)).json.code).toBe('lease_released');
    expect((await run(['lease', 'acquire', '--as', 'rescuer'], a)).json.data?.['token']).toBe(3);
    // Status names the way on: the new holder's return, in the receiver's checkout.
    expect((await status(a)).next[0]).toMatchObject({ verb: 'return', command: 'handoff return --token 3' });

    writeFileSync(join(b, 'done.md'), 'finished after the lease moved\n');
    const stale = await run(['return', '--no-wait'], b);
    expect([stale.code, stale.json.code]).toEqual([77, 'stale_token']);
    const returned = await run(['return', '--no-wait', '--token', '3'], b);
    expect(returned.json.code, JSON.stringify(returned.json.error)).toBe('handoff_ready');
    expect((await status(a)).state).toBe('RETURN_HANDOFF_READY');
    expect((await run(['lease', 'renew', '--token', '2'], a)).code).toBe(77);

    const back = await run(['accept', cycle, '--return', '--as', 'primary', '--checkout'], a);
    expect(back.json).toMatchObject({ code: 'accepted', data: { token: 4 } });
    expect((await status(a)).state).toBe('CLOSED');
  });
});

describe('handoff cancel of a return leg that cannot be made', () => {
  it('back to TAKEOVER with the lease kept, recorded as abandoned; then the holder closes the cycle one-way', async () => {
    const { a, b, remote, cycle } = await takenOver(true);
    hook(remote, 'pre-receive', 'echo "no return branches" >&2; exit 1');
    writeFileSync(join(b, 'done.md'), 'finished by B\n');
    const blocked = await run(['return', '--no-wait'], b);
    expect(blocked.json.code).toBe('drain_blocked');
    expect((await status(a)).situation).toBe('TAKEOVER (return blocked)');

    const cancelled = await run(['cancel', '--reason', 'the remote refuses it'], b);
    expect(cancelled.json).toMatchObject({ code: 'cancelled', data: { cycle, leg: 'return', state: 'TAKEOVER', step: 'publish' } });
    const after = await status(a);
    expect(after).toMatchObject({ state: 'TAKEOVER', situation: 'TAKEOVER (held)' });
    expect(after.next.map((n) => n.verb)).toEqual(['return', 'close --one-way', 'lease break']);
    expect(readdirSync(join(a, '.session-handoff', cycle, 'return')).filter((n) => n.startsWith('abandoned-'))).toHaveLength(1);
    // The return's snapshot ref (made in the receiver's checkout) is kept.
    expect(cancelled.json.data?.['kept_ref']).toBe(`refs/heads/handoff/${cycle}-return`);
    expect(git(b, 'rev-parse', '--verify', `refs/heads/handoff/${cycle}-return`)).toMatch(/^[0-9a-f]{40}$/);

    const closed = await run(['close', '--one-way'], b);
    expect(closed.json.code).toBe('ok');
    expect((await status(a)).state).toBe('CLOSED');
    expect(existsSync(join(a, '.session-handoff', cycle, 'abandoned.json'))).toBe(false);
  });
});
