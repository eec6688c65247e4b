import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startDaemon, sharedDaemon } from '../support/daemon.js';
import { git } from '../support/git.js';
import { twoClones } from '../support/scenario.js';
import { piped } from './ingest-support.js';
import type { LeaseRecord } from './travelling-scenes.js';

// Follow-up to issue 25: once the receiver's checkout handed the work back on one machine
// (RETURN_HANDOFF_READY), it stopped counting as receiving, so `status` and `cancel` there acted on its
// own idle workspace. The return on offer is still that checkout's cycle until the primary takes it back.

const shared = sharedDaemon();
const run = shared.run;
const status = async (repo: string) => (await run(['status'], repo)).json.data ?? {};
/** The edit guard's verdict on an edit in `repo` by the holder's session. */
const guard = async (repo: string, session: string) => {
  const hook = {
    session_id: session,
    cwd: repo,
    hook_event_name: 'PreToolUse',
    tool_name: 'Edit',
    tool_input: { file_path: join(repo, 'f.txt'), content: 'x' },
  };
  const out = await piped(['hook', 'claude-guard', '--state-dir', shared.daemon.stateDir], JSON.stringify(hook));
  return (JSON.parse(out.stdout) as { hookSpecificOutput?: { permissionDecision: string } }).hookSpecificOutput?.permissionDecision ?? 'allow';
};
const verbs = (view: Record<string, unknown>) => (view['next'] as { verb: string; repo: string | null }[]).map((step) => step.verb);

/** A cycle offered by a, taken by b with `--checkout` on the same machine, and handed back by b through `origin`. */
async function returned() {
  const { a, b, remote } = twoClones();
  writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
  const now = await run(['now', '--no-wait'], a);
  expect(now.json.code, JSON.stringify(now.json)).toBe('handoff_ready');
  const cycle = (now.json.data?.['cycle'] as { id: string }).id;
  const record = () => JSON.parse(git(remote, 'show', `refs/handoff/lease/${cycle}:lease.json`)) as LeaseRecord;
  const accepted = await run(['accept', cycle, '--as', 'first', '--checkout'], b);
  expect(accepted.json.code, JSON.stringify(accepted.json)).toBe('accepted');
  const token = Number(accepted.json.data?.['token']);
  writeFileSync(join(b, 'f.txt'), 'one\ntwo\nthree by b\n');
  const back = await run(['return', '--no-wait', '--token', String(token)], b);
  expect(back.json.code, JSON.stringify(back.json)).toBe('handoff_ready');
  expect(record()).toMatchObject({ state: 'return_offered', holder: { executor: 'first', token } });
  return { a, b, cycle, record, token };
}

describe('one machine: the receiver checkout answers for the return it offered', () => {
  it('status there shows the return on offer; every lease verb answers from the cycle; cancel withdraws the return (same token, journalled)', async () => {
    const { a, b, cycle, record, token } = await returned();
    const seen = await status(b);
    expect(seen).toMatchObject({ workspace: a, state: 'RETURN_HANDOFF_READY', cycle: { id: cycle }, receiving: { cycle, home: a, checkout: b } });
    // The primary takes it back in its checkout; this checkout may withdraw it, as on two machines.
    expect(verbs(seen)).toEqual(['accept --return', 'cancel']);
    expect((seen['next'] as { repo: string | null }[])[1]?.repo).toBe(b);
    // The work was handed back: nobody edits it in b while it waits for the primary.
    expect(await guard(b, 'first')).toBe('deny');

    const release = await run(['lease', 'release', '--token', String(token)], b);
    expect(release.json.code, JSON.stringify(release.json)).toBe('lease_travels');
    expect(release.json.error?.message).toContain('RETURN_HANDOFF_READY');
    expect((await run(['lease', 'acquire', '--as', 'second'], b)).json.code).toBe('lease_travels');
    expect((await run(['lease', 'show'], b)).json.data).toMatchObject({ workspace: a, checkout: b, cycle, state: 'RETURN_HANDOFF_READY' });
    expect((await run(['return', '--no-wait', '--token', String(token)], b)).json.code).toBe('wrong_state');
    expect(record()).toMatchObject({ state: 'return_offered', holder: { executor: 'first', token } });

    const cancelled = await run(['cancel', '--reason', 'the primary will not come'], b);
    expect(cancelled.json, JSON.stringify(cancelled.json)).toMatchObject({ code: 'cancelled', data: { workspace: a, state: 'TAKEOVER', leg: 'return' } });
    expect(cancelled.json.data?.['withdrawn']).toMatch(/^[0-9a-f]{40}$/);
    expect(existsSync(String(cancelled.json.data?.['record']))).toBe(true);
    expect(record()).toMatchObject({ state: 'taken', holder: { executor: 'first', token } });
    const held = await status(b);
    expect(held).toMatchObject({
      state: 'TAKEOVER',
      situation: 'TAKEOVER (held)',
      receiving: { cycle, home: a },
      lease: { holder: { executor: 'first', token } },
    });
    expect(await status(a)).toMatchObject({ state: 'TAKEOVER', situation: 'TAKEOVER (held)' });

    // The holder hands back again, and the primary takes it: the receiver's checkout is its own again.
    expect((await run(['return', '--no-wait', '--token', String(token)], b)).json.code).toBe('handoff_ready');
    const taken = await run(['accept', cycle, '--return', '--as', 'primary'], a);
    expect(taken.json, JSON.stringify(taken.json)).toMatchObject({ code: 'accepted', data: { state: 'CLOSED' } });
    expect(await status(b)).toMatchObject({ workspace: b, state: 'NORMAL', receiving: null });
    expect(await guard(b, 'anyone')).toBe('allow');
    expect((await run(['cancel'], b)).json.code).toBe('wrong_state');
    expect((await status(a))['state']).toBe('CLOSED');
  });

  it("the primary's own cancel withdraws nothing: only the holder's checkout withdraws its return, also after a restart", async () => {
    const { a, b, cycle, record, token } = await returned();
    expect(verbs(await status(a))).toEqual(['accept --return', 'cancel']);
    expect((await run(['cancel'], a)).json.code).toBe('wrong_state');
    expect(record()).toMatchObject({ state: 'return_offered', holder: { executor: 'first', token } });
    expect((await status(a))['state']).toBe('RETURN_HANDOFF_READY');

    // The journal says which checkout took the cycle over: a restarted daemon still answers for it in b.
    const dir = shared.daemon.stateDir;
    await shared.daemon.stop();
    shared.daemon = await startDaemon(dir);
    expect(await status(b)).toMatchObject({ workspace: a, state: 'RETURN_HANDOFF_READY', receiving: { cycle, home: a, checkout: b } });
    expect((await run(['cancel'], b)).json).toMatchObject({ code: 'cancelled', data: { state: 'TAKEOVER', leg: 'return' } });
    expect(record()).toMatchObject({ state: 'taken', holder: { executor: 'first', token } });
  });

  it('cancel in b racing accept --return in a: the remote takes exactly one, the loser is told lease_held', { timeout: 120_000 }, async () => {
    for (let round = 0; round < 3; round++) {
      const { a, b, cycle, record, token } = await returned();
      const [cancel, accept] = await Promise.all([run(['cancel'], b), run(['accept', cycle, '--return', '--as', 'primary'], a)]);
      const wins = [cancel.json.code === 'cancelled', accept.json.code === 'accepted'];
      expect(wins.filter(Boolean), `cancel ${cancel.json.code}, accept ${accept.json.code}`).toHaveLength(1);
      if (wins[0] === true) {
        expect(accept.json.code, JSON.stringify(accept.json)).toBe('lease_held');
        expect(record()).toMatchObject({ state: 'taken', holder: { executor: 'first', token } });
        expect(await status(b)).toMatchObject({ state: 'TAKEOVER', situation: 'TAKEOVER (held)', receiving: { cycle } });
      } else {
        expect(cancel.json.code, JSON.stringify(cancel.json)).toBe('lease_held');
        expect(record()).toMatchObject({ state: 'closed', holder: { executor: 'primary' } });
        expect((await status(a))['state']).toBe('CLOSED');
        expect(await status(b)).toMatchObject({ workspace: b, state: 'NORMAL', receiving: null });
      }
    }
  });
});
