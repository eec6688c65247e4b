import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DAEMON_NODE_FLAGS } from '../../daemon/node-flags.js';
import { CLI, startDaemon, type CliResult } from '../support/daemon.js';
import { tempDir } from '../support/git.js';

const UNIT = 'session-handoff.service';

function service(home: string, stateDir: string, args: readonly string[], json = true): Promise<CliResult> {
  return new Promise((resolve) => {
    const argv = [CLI, '--state-dir', stateDir, 'service', ...args, ...(json ? ['--json'] : [])];
    execFile(process.execPath, argv, { env: { ...process.env, HOME: home }, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr, json: json && stdout !== '' ? (JSON.parse(stdout) as CliResult['json']) : { code: '', data: null, authority: '' } });
    });
  });
}

/** Whether a user systemd answers here: most containers and CI runners have none. */
function userSystemd(): string | true {
  const probe = spawnSync('systemctl', ['--user', 'show-environment'], { encoding: 'utf8' });
  if (probe.error !== undefined) return `systemctl is not installed (${probe.error.message})`;
  return probe.status === 0 ? true : `systemctl --user: ${probe.stderr.trim()}`;
}

const onLinux = process.platform === 'linux';

describe.runIf(onLinux)('handoff service on Linux', () => {
  it('--dry-run prints the steps and exactly the unit it would write, and writes nothing', async () => {
    const home = tempDir('home');
    const stateDir = join(tempDir('state-parent'), 'state');
    const dry = await service(home, stateDir, ['install', '--dry-run']);
    expect([dry.code, dry.json.code]).toEqual([0, 'ok']);
    const file = join(home, '.config', 'systemd', 'user', UNIT);
    expect(dry.json.data).toMatchObject({ dry_run: true, file, state_dir: stateDir });
    expect(dry.json.data?.['steps']).toEqual([
      `create the state dir ${stateDir} (0700)`,
      `write ${file}`,
      'run systemctl --user daemon-reload',
      `run systemctl --user enable ${UNIT}`,
      `run systemctl --user restart ${UNIT}`,
    ]);
    const unit = String(dry.json.data?.['content']);
    expect(unit).toContain(
      `ExecStart="${process.execPath}" ${DAEMON_NODE_FLAGS.map((flag) => `"${flag}"`).join(' ')} "${CLI}" "daemon" "--state-dir" "${stateDir}"\n`,
    );
    expect(unit).toContain(`Environment="HANDOFF_STATE_DIR=${stateDir}"\n`);
    expect(unit).toContain(`StandardOutput=append:${stateDir}/autostart.log\n`);
    // The words a person reads: the same steps, then the file.
    const human = await service(home, stateDir, ['install', '--dry-run'], false);
    expect(human.stdout).toBe(`${(dry.json.data?.['steps'] as string[]).map((s) => `would ${s}`).join('\n')}\n--- ${file}\n${unit}`);
    expect(existsSync(join(home, '.config'))).toBe(false);
    expect(existsSync(stateDir)).toBe(false);
  });

  it('without a user systemd: install writes nothing and exits 69 (retrying will not help); status and uninstall follow a unit written earlier', async (context) => {
    const systemd = userSystemd();
    if (systemd === true) {
      console.log('skipped: a user systemd answers here; the next test starts the unit for real');
      context.skip();
    }
    const home = tempDir('home');
    const stateDir = tempDir('state');
    const file = join(home, '.config', 'systemd', 'user', UNIT);
    const planned = String((await service(home, stateDir, ['install', '--dry-run'])).json.data?.['content']);
    const installed = await service(home, stateDir, ['install']);
    expect([installed.code, installed.json.code]).toEqual([69, 'service_unavailable']);
    expect(installed.json.error?.hint).toMatch(/^nothing was written\. Without a service, any handoff command starts the daemon/);
    expect(installed.json.data?.['done']).toEqual([]);
    expect(existsSync(join(home, '.config'))).toBe(false);
    // A unit written while a user systemd answered (another session, before a move into a container).
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, planned);

    const status = await service(home, stateDir, ['status']);
    expect(status.json.data).toMatchObject({ file, installed: true, up_to_date: true, active: false, state_dir: stateDir, daemon_outside_service: null });
    expect(status.json.data?.['manager']).toMatch(/^systemctl --user: /);
    // Idempotent: the unit is not written again, only started.
    expect((await service(home, stateDir, ['install', '--dry-run'])).json.data?.['steps']).toEqual([
      `run systemctl --user enable ${UNIT}`,
      `run systemctl --user start ${UNIT}`,
    ]);

    // A daemon started by hand holds the state dir: install would stop it so the unit's own can start.
    const daemon = await startDaemon(stateDir);
    try {
      expect((await service(home, stateDir, ['install', '--dry-run'])).json.data?.['steps']).toContain(
        `stop the daemon pid ${daemon.pid} (it runs outside the service; the service's daemon takes over)`,
      );
      expect((await service(home, stateDir, ['status'], false)).stdout).toContain(`a daemon outside the service serves it: pid ${daemon.pid}`);
    } finally {
      await daemon.stop();
    }

    expect((await service(home, stateDir, ['uninstall', '--dry-run'])).json.data?.['steps']).toEqual([`remove ${file}`]);
    const removed = await service(home, stateDir, ['uninstall']);
    expect([removed.code, removed.json.data?.['done']]).toEqual([0, [`remove ${file}`]]);
    expect(existsSync(file)).toBe(false);
    expect((await service(home, stateDir, ['uninstall'], false)).stdout).toBe(`nothing to do (${file})\n`);
    console.log(`handoff service: no user systemd here (${systemd}); the unit's start was not tried`);
  });

  it('with a user systemd: install starts the daemon, `handoff status` answers, uninstall stops it', async (context) => {
    const systemd = userSystemd();
    const real = join(homedir(), '.config', 'systemd', 'user', UNIT);
    if (systemd !== true || existsSync(real)) {
      console.log(
        `skipped: ${systemd === true ? `${real} exists already (a user's own install is never touched by a test)` : `no user systemd here: ${systemd}`}`,
      );
      context.skip();
    }
    const stateDir = tempDir('state');
    try {
      const installed = await service(homedir(), stateDir, ['install']);
      expect([installed.code, installed.json.code], installed.stdout).toEqual([0, 'ok']);
      const status = await service(homedir(), stateDir, ['status']);
      expect(status.json.data).toMatchObject({ installed: true, up_to_date: true, active: true });
      const answered = await new Promise<string>((resolve) => {
        const retry = (left: number) =>
          execFile(
            process.execPath,
            [CLI, '--state-dir', stateDir, 'status', '--json'],
            { env: { ...process.env, HANDOFF_NO_AUTO_START: '1' }, encoding: 'utf8' },
            (error, stdout) => {
              if (error === null || left === 0) resolve(stdout);
              else setTimeout(() => retry(left - 1), 100);
            },
          );
        retry(100);
      });
      expect(JSON.parse(answered)).toMatchObject({ code: 'status' });
    } finally {
      const removed = await service(homedir(), stateDir, ['uninstall']);
      expect(removed.code).toBe(0);
    }
    expect(existsSync(real)).toBe(false);
  }, 120_000);
});
