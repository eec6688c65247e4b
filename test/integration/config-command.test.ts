import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cli, CLI, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';

function config(stateDir: string, ...args: string[]): Promise<{ code: number; json: { code: string; data: Record<string, unknown> | null } }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, '--state-dir', stateDir, 'config', ...args, '--json'], { encoding: 'utf8' }, (error, stdout) => {
      resolve({ code: error ? Number(error.code) : 0, json: JSON.parse(stdout) as never });
    });
  });
}

describe('handoff config get|set', () => {
  it('set validates the whole file, writes only the keys set (0600), says when each applies; get fills defaults', async () => {
    const stateDir = join(tempDir('config'), 'state');
    const file = join(stateDir, 'config.json');
    const set = await config(stateDir, 'set', 'pressure.prepare_percent', '70');
    expect([set.code, set.json.data]).toEqual([
      0,
      { key: 'pressure.prepare_percent', value: 70, file, applies: 'when the daemon starts (none is running)', reload: null },
    ]);
    expect((await config(stateDir, 'set', 'auto_start', 'false')).json.data?.['applies']).toBe('now');
    expect((await config(stateDir, 'set', 'git_timeout_seconds', '30')).json.data?.['applies']).toBe(
      'at the next start: handoff daemon stop && handoff daemon',
    );
    expect((await config(stateDir, 'set', 'validation.command', 'npm test')).json.data?.['value']).toBe('npm test');
    const written = readFileSync(file, 'utf8');
    expect(JSON.parse(written)).toEqual({ pressure: { prepare_percent: 70 }, auto_start: false, git_timeout_seconds: 30, validation: { command: 'npm test' } });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect((await config(stateDir, 'get', 'pressure')).json.data?.['value']).toEqual({
      prepare_percent: 70,
      evacuate_percent: 90,
      hysteresis_percent: 5,
      freshness_seconds: 600,
      count_limit_families: [],
    });

    // A value the daemon would refuse, and a key it does not know: refused, the file as it was.
    const refused = await config(stateDir, 'set', 'pressure.prepare_percent', '95');
    expect([refused.code, refused.json.code]).toEqual([65, 'invalid_config']);
    expect([(await config(stateDir, 'set', 'nope', '1')).code, (await config(stateDir, 'set', 'pressure', '{}')).code]).toEqual([64, 64]);
    expect(readFileSync(file, 'utf8')).toBe(written);
  });
});

describe('handoff config set on a running daemon', () => {
  let daemon: DaemonProcess | null = null;
  afterEach(async () => daemon?.stop());

  type Status = { state: string; thresholds: { prepare_percent: number; evacuate_percent: number } };
  const status = async (stateDir: string, repo: string) => (await cli(stateDir, ['status', '--json'], repo)).json.data as unknown as Status;

  it('a lowered PREPARE line moves the stage without a restart, a raised one never moves it back, a restart key says so, a restart keeps it', async () => {
    const stateDir = join(tempDir('config-live'), 'state');
    mkdirSync(stateDir, { mode: 0o700 });
    // auto_start off: a restart below is the test's own, never one a command started.
    writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ pressure: { prepare_percent: 88, evacuate_percent: 95 }, auto_start: false }), {
      mode: 0o600,
    });
    const repo = tempRepo();
    daemon = await startDaemon(stateDir);
    await cli(stateDir, ['signal', '--source', 'claude-statusline', '--metric', 'context', '--used-percent', '85'], repo);
    expect((await status(stateDir, repo)).state).toBe('NORMAL');

    const lowered = await config(stateDir, 'set', 'pressure.prepare_percent', '80');
    expect(lowered.json.data).toMatchObject({
      applies: 'now',
      reload: { applied: ['pressure.prepare_percent'], moves: [{ workspace: repo, from: 'NORMAL', to: 'PREPARE' }] },
    });
    expect(await status(stateDir, repo)).toMatchObject({ state: 'PREPARE', thresholds: { prepare_percent: 80, evacuate_percent: 95 } });
    const human = await cli(stateDir, ['config', 'set', 'pressure.evacuate_percent', '84'], repo);
    expect(human.stdout).toBe(`pressure.evacuate_percent = 84: applies now\n  ${repo}: PREPARE → EVACUATE\n`);

    // Raised above the reading again: the evacuation goes on (or has finished), it is never undone.
    await config(stateDir, 'set', 'pressure.evacuate_percent', '99');
    const raised = await config(stateDir, 'set', 'pressure.prepare_percent', '98');
    expect(raised.json.data).toMatchObject({ applies: 'now', reload: { moves: [] } });
    const after = await status(stateDir, repo);
    expect(['EVACUATE', 'HANDOFF_READY']).toContain(after.state);
    expect(after.thresholds).toEqual({ prepare_percent: 98, evacuate_percent: 99, hysteresis_percent: 5 });

    const later = await config(stateDir, 'set', 'drain_timeout_seconds', '30');
    expect(later.json.data?.['applies']).toBe('at the next start: handoff daemon stop && handoff daemon');
    const waiting = await config(stateDir, 'set', 'pressure.hysteresis_percent', '4');
    expect(waiting.json.data).toMatchObject({ reload: { applied: ['pressure.hysteresis_percent'], at_next_start: ['drain_timeout_seconds'] } });

    await daemon.stop();
    daemon = await startDaemon(stateDir);
    expect((await status(stateDir, repo)).thresholds).toEqual({ prepare_percent: 98, evacuate_percent: 99, hysteresis_percent: 4 });
  });
});
