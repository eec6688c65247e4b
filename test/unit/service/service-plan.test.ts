import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LAUNCH_AGENT_LABEL, renderLaunchAgent } from '../../../daemon/service-unit/launch-agent.js';
import { installPlan, serviceFile, serviceSpec, uninstallPlan, type ServiceFacts } from '../../../daemon/service-unit/service-plan.js';
import { renderSystemdUnit, SYSTEMD_UNIT } from '../../../daemon/service-unit/systemd-unit.js';

// A state dir with what a unit file and a plist must escape: a space, a percent, a dollar, quotes, XML's own characters.
const hostileDir = '/home/a b/state 100% $HOME "x" & <y> \'z\'';
const spec = serviceSpec({
  execPath: process.execPath,
  cli: '/opt/handoff/dist/daemon/cli/main.js',
  stateDir: hostileDir,
  path: '/usr/local/bin:/usr/bin:/bin',
  version: '9.9.9',
  log: `${hostileDir}/autostart.log`,
});

/** The unit as systemd reads it: sections of `Key=value` lines, a key may repeat. */
function parseUnit(text: string): Record<string, [string, string][]> {
  const sections: Record<string, [string, string][]> = {};
  let current: [string, string][] | null = null;
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header?.[1] !== undefined) {
      current = sections[header[1]] = [];
      continue;
    }
    const at = line.indexOf('=');
    if (current === null || at < 1) throw new Error(`not a unit line: ${line}`);
    current.push([line.slice(0, at), line.slice(at + 1)]);
  }
  return sections;
}

/** systemd's quoting of ExecStart and Environment: double-quoted words, backslash escapes, `%%` and `$$`. */
function unquoteWords(value: string): string[] {
  const words: string[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"/g;
  for (const match of value.matchAll(pattern)) words.push((match[1] ?? '').replace(/\\(.)/g, '$1').replaceAll('%%', '%').replaceAll('$$', '$'));
  expect(value.replace(pattern, '').trim()).toBe('');
  return words;
}

const values = (unit: Record<string, [string, string][]>, section: string, key: string) => (unit[section] ?? []).filter(([k]) => k === key).map(([, v]) => v);

describe('the systemd user unit', () => {
  const unit = parseUnit(renderSystemdUnit(spec));

  it("starts the absolute node (with the daemon's V8 flags) and CLI of this install with the state dir, which is also in its environment", () => {
    expect(values(unit, 'Service', 'ExecStart').map(unquoteWords)).toEqual([
      [process.execPath, '--max-semi-space-size=1', '/opt/handoff/dist/daemon/cli/main.js', 'daemon', '--state-dir', hostileDir],
    ]);
    expect(values(unit, 'Service', 'Environment').map(unquoteWords)).toEqual([[`HANDOFF_STATE_DIR=${hostileDir}`], ['PATH=/usr/local/bin:/usr/bin:/bin']]);
  });

  it('appends its output to the state dir, restarts on failure but not on what a person must fix, and starts at login', () => {
    expect(values(unit, 'Service', 'StandardOutput')).toEqual([`append:${hostileDir.replaceAll('%', '%%')}/autostart.log`]);
    expect(values(unit, 'Service', 'Restart')).toEqual(['on-failure']);
    expect(values(unit, 'Service', 'RestartPreventExitStatus')).toEqual(['64 65 75 77']);
    expect(values(unit, 'Install', 'WantedBy')).toEqual(['default.target']);
  });

  it('passes `systemd-analyze verify` (where it is installed)', (context) => {
    const found = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
    if (found.status !== 0) {
      console.log('skipped: systemd-analyze is not installed here');
      context.skip();
    }
    const dir = mkdtempSync(join(tmpdir(), 'handoff-unit-'));
    // verify checks that ExecStart's program exists, that every key is known and every value parses
    // (the quoting and the escapes of a state dir with a space, a percent, a dollar and quotes).
    const stateDir = join(dir, 'st ate 100% $HOME "q"');
    mkdirSync(stateDir);
    const real = serviceSpec({
      execPath: process.execPath,
      cli: process.execPath,
      stateDir,
      path: spec.path,
      version: spec.version,
      log: join(stateDir, 'autostart.log'),
    });
    writeFileSync(join(dir, SYSTEMD_UNIT), renderSystemdUnit(real));
    const verified = spawnSync('systemd-analyze', ['verify', join(dir, SYSTEMD_UNIT)], { encoding: 'utf8' });
    expect([verified.status, verified.stderr]).toEqual([0, '']);
  });
});

describe('the macOS LaunchAgent', () => {
  it('is a property list that plistlib reads back to the same program, environment and log', (context) => {
    const python = ['/usr/bin/python3', 'python3'].find((p) => p === 'python3' || existsSync(p)) ?? 'python3';
    if (spawnSync(python, ['-c', 'import plistlib'], { encoding: 'utf8' }).status !== 0) {
      console.log('skipped: no python3 with plistlib here');
      context.skip();
    }
    const read = execFileSync(python, ['-c', 'import json, plistlib, sys; print(json.dumps(plistlib.loads(sys.stdin.buffer.read(), fmt=plistlib.FMT_XML)))'], {
      input: renderLaunchAgent(spec),
      encoding: 'utf8',
    });
    expect(JSON.parse(read)).toEqual({
      Label: LAUNCH_AGENT_LABEL,
      ProgramArguments: [process.execPath, '--max-semi-space-size=1', '/opt/handoff/dist/daemon/cli/main.js', 'daemon', '--state-dir', hostileDir],
      EnvironmentVariables: { HANDOFF_STATE_DIR: hostileDir, PATH: '/usr/local/bin:/usr/bin:/bin' },
      RunAtLoad: true,
      KeepAlive: { SuccessfulExit: false },
      ProcessType: 'Background',
      StandardOutPath: `${hostileDir}/autostart.log`,
      StandardErrorPath: `${hostileDir}/autostart.log`,
    });
  });
});

describe('the plan', () => {
  const linux: ServiceFacts = {
    platform: 'linux',
    uid: 1000,
    file: serviceFile('linux', '/home/u'),
    current: null,
    loaded: false,
    managerReachable: true,
    strayDaemon: null,
    stateDir: null,
  };
  const mac: ServiceFacts = { ...linux, platform: 'darwin', file: serviceFile('darwin', '/Users/u') };

  it('installs on Linux: the unit written, systemd reloaded, enabled and (re)started', () => {
    expect(linux.file).toBe('/home/u/.config/systemd/user/session-handoff.service');
    expect(installPlan({ ...linux, stateDir: '/s' }, 'unit')).toEqual([
      { kind: 'make_state_dir', dir: '/s' },
      { kind: 'write', file: linux.file, content: 'unit' },
      { kind: 'run', argv: ['systemctl', '--user', 'daemon-reload'], may_fail: false },
      { kind: 'run', argv: ['systemctl', '--user', 'enable', SYSTEMD_UNIT], may_fail: false },
      { kind: 'run', argv: ['systemctl', '--user', 'restart', SYSTEMD_UNIT], may_fail: false },
    ]);
  });

  it('is idempotent: an unchanged, running service is left alone; an unchanged, stopped one is started without a write', () => {
    expect(installPlan({ ...linux, current: 'unit', loaded: true }, 'unit')).toEqual([]);
    expect(installPlan({ ...linux, current: 'unit' }, 'unit').map((s) => (s.kind === 'run' ? s.argv.join(' ') : s.kind))).toEqual([
      `systemctl --user enable ${SYSTEMD_UNIT}`,
      `systemctl --user start ${SYSTEMD_UNIT}`,
    ]);
    expect(installPlan({ ...mac, current: 'plist', loaded: true }, 'plist')).toEqual([]);
  });

  it('stops a daemon that runs outside the service before starting the service, so the instance guard does not refuse it', () => {
    expect(installPlan({ ...linux, current: 'unit', loaded: true, strayDaemon: 42 }, 'unit')[0]).toEqual({ kind: 'stop_daemon', pid: 42 });
  });

  it('installs on macOS: the plist written, booted out first when loaded (its failure tolerated), then bootstrapped in gui/<uid>', () => {
    expect(mac.file).toBe(`/Users/u/Library/LaunchAgents/${LAUNCH_AGENT_LABEL}.plist`);
    expect(installPlan({ ...mac, current: 'old', loaded: true }, 'new')).toEqual([
      { kind: 'write', file: mac.file, content: 'new' },
      { kind: 'run', argv: ['launchctl', 'bootout', `gui/1000/${LAUNCH_AGENT_LABEL}`], may_fail: true },
      { kind: 'run', argv: ['launchctl', 'bootstrap', 'gui/1000', mac.file], may_fail: false },
    ]);
  });

  it('uninstalls what is there and nothing when nothing is', () => {
    expect(uninstallPlan(linux)).toEqual([]);
    expect(uninstallPlan({ ...linux, current: 'unit', loaded: true }).map((s) => (s.kind === 'run' ? s.argv.join(' ') : s.kind))).toEqual([
      `systemctl --user disable --now ${SYSTEMD_UNIT}`,
      'remove',
      'systemctl --user daemon-reload',
    ]);
    expect(uninstallPlan({ ...linux, current: 'unit', managerReachable: false })).toEqual([{ kind: 'remove', file: linux.file }]);
    expect(uninstallPlan({ ...mac, current: 'plist', loaded: true })).toEqual([
      { kind: 'run', argv: ['launchctl', 'bootout', `gui/1000/${LAUNCH_AGENT_LABEL}`], may_fail: true },
      { kind: 'remove', file: mac.file },
    ]);
  });
});
