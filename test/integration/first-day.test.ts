import { describe, expect, it } from 'vitest';
import { cli, sharedDaemon } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';

const shared = sharedDaemon();

describe('the smaller first-day points (issue 32, 6)', () => {
  it('`handoff daemon stop` with nothing running exits 0 and says so, like `systemctl stop`', async () => {
    const stateDir = tempDir('state');
    const stop = await cli(stateDir, ['daemon', 'stop']);
    expect([stop.code, stop.stdout.trim()]).toEqual([0, `no daemon runs for ${stateDir}: nothing to stop`]);
    expect((await cli(stateDir, ['daemon', 'stop', '--json'])).json).toMatchObject({ code: 'daemon_not_running', data: { pid: null, state_dir: stateDir } });
  });

  it('`handoff list` outside a repository lists the cycles of every workspace, and --json gives the state the table shows', async () => {
    const repo = tempRepo();
    const now = await shared.run(['now', '--no-wait'], repo);
    expect(now.code).toBe(0);
    const cycle = ((await shared.run(['status'], repo)).json.data?.['cycle'] as { id: string }).id;
    await shared.run(['cancel'], repo);
    const outside = tempDir('outside');
    const table = await cli(shared.daemon.stateDir, ['list'], outside);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`${cycle}\\s+abandoned\\s+.*${repo}`));
    const json = await shared.run(['list'], outside);
    expect(json.code).toBe(0);
    expect((json.json.data as { cycles: unknown[] }).cycles).toContainEqual(expect.objectContaining({ cycle, workspace: repo, state: 'abandoned' }));
    // An explicit --repo that is not a repository keeps its error.
    expect((await shared.run(['list', '--repo', outside], outside)).json.code).toBe('not_a_repository');
  });
});
