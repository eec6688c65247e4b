import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, startDaemon, until } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';

describe('the state dir', () => {
  it('is created 0700 with a 0600 token of 256 bits', async () => {
    const stateDir = join(tempDir('parent'), 'state');
    const daemon = await startDaemon(stateDir);
    try {
      const { statSync, readFileSync } = await import('node:fs');
      expect(statSync(stateDir).mode & 0o777).toBe(0o700);
      expect(statSync(join(stateDir, 'token')).mode & 0o777).toBe(0o600);
      expect(readFileSync(join(stateDir, 'token'), 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
      expect(statSync(join(stateDir, 'daemon.json')).mode & 0o777).toBe(0o600);
    } finally {
      await daemon.stop();
    }
    expect(existsSync(join(stateDir, 'daemon.json'))).toBe(false);
  });

  it.each([
    ['the state dir', '', 0o755, /chmod 700/],
    ['the token file', 'token', 0o644, /chmod 600/],
  ])('refuses to start when %s is open to others, and names the fix', async (_what, file, mode, fix) => {
    const stateDir = tempDir('state');
    chmodSync(stateDir, 0o700);
    if (file !== '') writeFileSync(join(stateDir, file), `${'a'.repeat(64)}\n`, { mode: 0o600 });
    chmodSync(join(stateDir, file), mode);
    const result = await cli(stateDir, ['daemon', '--json']);
    expect(result.code).toBe(77);
    expect(result.json.code).toBe('insecure_state_dir');
    expect(result.json.error?.hint).toMatch(fix);
    expect(existsSync(join(stateDir, 'daemon.json'))).toBe(false);
  });

  it('refuses an invalid config with a message naming the key', async () => {
    const stateDir = tempDir('state');
    chmodSync(stateDir, 0o700);
    writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ pressure: { prepare_percent: 95, evacuate_percent: 90 } }));
    const result = await cli(stateDir, ['daemon', '--json']);
    expect(result.code).toBe(65);
    expect(result.json.code).toBe('invalid_config');
    expect(result.json.error?.message).toMatch(/prepare_percent \(95\) must be below evacuate_percent \(90\)/);
  });

  it('uses thresholds from the config', async () => {
    const stateDir = tempDir('state');
    chmodSync(stateDir, 0o700);
    writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ pressure: { prepare_percent: 50, evacuate_percent: 70 } }));
    const daemon = await startDaemon(stateDir);
    try {
      const repo = tempRepo();
      const result = await cli(stateDir, ['signal', '--json', '--source', 'claude-statusline', '--metric', 'context', '--used-percent', '55'], repo);
      expect(result.json.data?.['state']).toBe('PREPARE');
    } finally {
      await daemon.stop();
    }
  });
});

describe('one daemon per state dir', () => {
  it('a second daemon refuses with a clear message; after kill -9 of the first a new one starts', async () => {
    const stateDir = tempDir('state');
    const first = await startDaemon(stateDir);
    const second = await cli(stateDir, ['daemon', '--json']);
    expect(second.code).toBe(75);
    expect(second.json.code).toBe('daemon_already_running');
    expect(second.json.error?.message).toMatch(new RegExp(`pid ${first.pid}`));
    expect(second.json.error?.hint).toMatch(/handoff daemon stop/);
    await first.kill9();
    const third = await startDaemon(stateDir);
    try {
      expect((await cli(stateDir, ['status', '--json'], tempRepo())).code).toBe(0);
    } finally {
      await third.stop();
    }
  });

  it('`handoff daemon stop` stops it and the CLI then reports 69 with a hint', async () => {
    const daemon = await startDaemon();
    const stop = await cli(daemon.stateDir, ['daemon', 'stop', '--json']);
    expect(stop.json.code).toBe('daemon_stopping');
    expect(daemon.child.exitCode ?? (await new Promise((r) => daemon.child.once('exit', r)))).toBe(0);
    const status = await cli(daemon.stateDir, ['status', '--json'], tempRepo());
    expect(status.code).toBe(69);
    expect(status.json.error?.hint).toMatch(/handoff daemon/);
  });
});

describe('the PAUSE kill switch', () => {
  const state = async (stateDir: string, repo: string) => String((await cli(stateDir, ['status', '--json'], repo)).json.data?.['state']);

  it('a workspace PAUSE file holds a 95 % reading; removing the file lets it move', async () => {
    const daemon = await startDaemon();
    try {
      const repo = tempRepo();
      expect(await state(daemon.stateDir, repo)).toBe('NORMAL');
      mkdirSync(join(repo, '.session-handoff'), { recursive: true });
      writeFileSync(join(repo, '.session-handoff', 'PAUSE'), 'investigating a flaky test\n');
      await until('paused', async () => ((await cli(daemon.stateDir, ['status', '--json'], repo)).json.data?.['paused'] ? true : undefined));
      const reading = await cli(daemon.stateDir, ['signal', '--json', '--source', 'claude-statusline', '--metric', 'context', '--used-percent', '95'], repo);
      expect(reading.json).toMatchObject({ code: 'reading_recorded', data: { state: 'NORMAL' } });
      const status = await cli(daemon.stateDir, ['status', '--json'], repo);
      expect(status.json.data?.['paused']).toMatchObject({ scope: 'workspace', reason: 'investigating a flaky test' });
      expect((await cli(daemon.stateDir, ['now', '--json'], repo)).code).toBe(77);
      rmSync(join(repo, '.session-handoff', 'PAUSE'));
      expect(await until('evacuate', async () => ((await state(daemon.stateDir, repo)) === 'EVACUATE' ? true : undefined))).toBe(true);
    } finally {
      await daemon.stop();
    }
  });

  it('handoff pause --global pauses every workspace until handoff unpause --global; git never sees the files', async () => {
    const daemon = await startDaemon();
    try {
      const repo = tempRepo();
      const paused = await cli(daemon.stateDir, ['pause', '--global', '--reason', 'travelling', '--json'], repo);
      expect(paused.json.code).toBe('paused');
      expect(existsSync(join(daemon.stateDir, 'PAUSE'))).toBe(true);
      await cli(daemon.stateDir, ['signal', '--json', '--source', 'claude-statusline', '--metric', 'context', '--used-percent', '85'], repo);
      expect(await state(daemon.stateDir, repo)).toBe('NORMAL');
      const human = await cli(daemon.stateDir, ['status'], repo);
      expect(human.stdout).toMatch(/PAUSED\s+global: travelling/);
      await cli(daemon.stateDir, ['unpause', '--global', '--json'], repo);
      expect(await state(daemon.stateDir, repo)).toBe('PREPARE');

      await cli(daemon.stateDir, ['pause', '--json'], repo);
      expect(existsSync(join(repo, '.session-handoff', 'PAUSE'))).toBe(true);
      const { git } = await import('../support/git.js');
      expect(git(repo, 'status', '--porcelain')).toBe('');
      await cli(daemon.stateDir, ['unpause', '--json'], repo);
      expect(existsSync(join(repo, '.session-handoff', 'PAUSE'))).toBe(false);
    } finally {
      await daemon.stop();
    }
  });

  it('a PAUSE file present while the daemon was down is honoured at start', async () => {
    const stateDir = tempDir('state');
    const repo = tempRepo();
    const first = await startDaemon(stateDir);
    await cli(stateDir, ['status', '--json'], repo);
    await first.stop();
    writeFileSync(join(repo, '.session-handoff', 'PAUSE'), '');
    const second = await startDaemon(stateDir);
    try {
      expect((await cli(stateDir, ['status', '--json'], repo)).json.data?.['paused']).toMatchObject({ scope: 'workspace', reason: null });
    } finally {
      await second.stop();
    }
  });
});
