import { describe, expect, it } from 'vitest';
import { cli, sharedDaemon, until } from '../support/daemon.js';
import { tempRepo } from '../support/git.js';

const shared = sharedDaemon();
const run = (args: string[], cwd: string) => cli(shared.daemon.stateDir, args, cwd);
const stateOf = async (repo: string) => (await shared.run(['status'], repo)).json.data?.['state'];

describe('the kill switch says what it holds back (issue 32, 3)', () => {
  it('paused: the answer to a reading and status say what the daemon would do; unpause says what starts now', async () => {
    const repo = tempRepo();
    await run(['pause', '--reason', 'lunch'], repo);
    const signal = await run(['signal', '--source', 'claude-statusline', '--metric', 'five_hour', '--used-percent', '95'], repo);
    expect(signal.code).toBe(0);
    expect(signal.stdout).toMatch(/state NORMAL; held by the kill switch: would be EVACUATE: five_hour 95 %/);
    expect((await shared.run(['status'], repo)).json.data?.['held_back']).toMatchObject({ state: 'EVACUATE', metric: 'five_hour', percent: 95 });
    expect((await run(['status'], repo)).stdout).toMatch(/would be EVACUATE: five_hour 95 %/);

    const unpaused = await run(['unpause'], repo);
    expect(unpaused.code).toBe(0);
    const cycle = (await shared.run(['status'], repo)).json.data?.['cycle'] as { id: string };
    expect(unpaused.stdout).toContain(`EVACUATE starts now in ${repo}: five_hour 95 %; the daemon checkpoints the work onto handoff/${cycle.id}`);
  });

  it('unpause with nothing held back says so', async () => {
    const repo = tempRepo();
    await run(['pause'], repo);
    expect((await run(['unpause'], repo)).stdout).toMatch(/nothing was held back: no stage starts/);
  });
});

describe('honest words (issue 32, 4)', () => {
  it('after `handoff cancel` with a reading at 91 %, status does not say "below the 80 % line"', async () => {
    const repo = tempRepo();
    await run(['signal', '--source', 'claude-statusline', '--metric', 'five_hour', '--used-percent', '91'], repo);
    expect(await stateOf(repo)).toBe('EVACUATE');
    expect((await run(['cancel'], repo)).code).toBe(0);
    await until('NORMAL', async () => ((await stateOf(repo)) === 'NORMAL' ? true : undefined));
    const status = (await run(['status'], repo)).stdout;
    expect(status).not.toMatch(/below the 80 % line/);
    expect(status).toMatch(/five_hour at 91 % \(claude-statusline\), read before\s+`handoff cancel`/);
  });

  it('a manual reading outside 0–100 is refused with a usage error and changes nothing', async () => {
    const repo = tempRepo();
    const typo = await run(['signal', '--source', 'claude-statusline', '--metric', 'five_hour', '--used-percent', '150'], repo);
    expect(typo.code).toBe(64);
    expect(typo.stderr).toMatch(/--used-percent '150' is not a percent from 0 to 100/);
    const status = (await shared.run(['status'], repo)).json.data as { state: string; readings: unknown[] };
    expect([status.state, status.readings]).toEqual(['NORMAL', []]);
    // The HTTP route refuses it too: the same schema.
    const body = { repo, source: 'claude-statusline', metric: 'five_hour', used_percent: 150 };
    const { api } = await import('../support/daemon.js');
    expect((await api(shared.daemon, 'POST', '/v1/signals', body)).status).toBe(400);
  });

  it('a bad --source is answered with the allowed values in CLI words', async () => {
    const repo = tempRepo();
    const bad = await run(['signal', '--source', 'claude', '--metric', 'five_hour', '--used-percent', '15'], repo);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toMatch(/--source 'claude' is not one of the allowed values/);
    expect(bad.stderr).toMatch(/use one of: claude-statusline, claude-hook, codex-rollout/);
    expect(bad.stderr).not.toMatch(/body\.source|schema/);
  });
});
