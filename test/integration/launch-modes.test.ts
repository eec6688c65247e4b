import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { NO_AUTO_START_ENV } from '../../daemon/cli/auto-start.js';
import { DAEMON_NODE_FLAGS } from '../../daemon/node-flags.js';
import { ownPackage } from '../../daemon/package-root.js';
import { serviceSpec } from '../../daemon/service-unit/service-plan.js';
// @ts-expect-error a plain .mjs build script without types
import { isCurrent } from '../../scripts/build-stamp.mjs';
import { CLI, cli, exited, until } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';
import { processFacts } from '../support/proc.js';

const { root, version } = ownPackage();
/** A user's environment: auto-start allowed (the suite's config turns it off for every other test). */
const userEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== NO_AUTO_START_ENV));

interface Launched {
  /** What the launch itself started (a foreground `handoff daemon`, `npm start`), when it stays. */
  readonly launcher: ChildProcess | null;
  readonly stateDir: string;
}

/** The four ways a daemon starts. The service unit's command is the one `handoff service install` writes (no systemd here). */
const MODES: Record<string, (stateDir: string) => Promise<Launched>> = {
  'handoff daemon': async (stateDir) => ({
    launcher: spawn(process.execPath, [CLI, 'daemon', '--state-dir', stateDir, '--port', '0'], { stdio: 'ignore' }),
    stateDir,
  }),
  'npm start': async (stateDir) => {
    // `npm start` rebuilds a stale dist/: that would pull it from under every other test running now.
    if (!(isCurrent(root) as boolean)) throw new Error('dist/ is older than the sources: run `npm run build` before this test');
    return { launcher: spawn('npm', ['start', '--silent', '--', '--state-dir', stateDir, '--port', '0'], { cwd: root, stdio: 'ignore' }), stateDir };
  },
  'the start on demand': async (stateDir) => {
    await new Promise((resolve) => execFile(process.execPath, [CLI, '--state-dir', stateDir, 'status', '--json'], { cwd: tempRepo(), env: userEnv }, resolve));
    return { launcher: null, stateDir };
  },
  'the service unit': async (stateDir) => {
    const [node = '', ...args] = serviceSpec({ execPath: process.execPath, cli: CLI, stateDir, path: process.env['PATH'] ?? '', version, log: '' }).command;
    return { launcher: spawn(node, args, { stdio: 'ignore' }), stateDir };
  },
};

const running: Launched[] = [];
afterEach(async () => {
  for (const { launcher, stateDir } of running.splice(0)) {
    await cli(stateDir, ['daemon', 'stop']);
    if (launcher !== null) await exited(launcher);
  }
});

const daemonPid = (stateDir: string) =>
  until(
    'daemon.json',
    async () =>
      existsSync(join(stateDir, 'daemon.json')) ? (JSON.parse(readFileSync(join(stateDir, 'daemon.json'), 'utf8')) as { pid: number }).pid : undefined,
    60_000,
  );

describe('one daemon however it is started (daemon/node-flags.ts)', () => {
  it.each(Object.keys(MODES))('%s: the daemon runs with its V8 flags, and its idle RSS is reported', async (mode) => {
    const launched = await (MODES[mode] ?? (() => Promise.reject(new Error(mode))))(tempDir('state'));
    running.push(launched);
    const pid = await daemonPid(launched.stateDir);
    const daemon = processFacts(pid);
    expect(daemon.argv.slice(1, 1 + DAEMON_NODE_FLAGS.length)).toEqual([...DAEMON_NODE_FLAGS]);
    expect(daemon.argv).toEqual(expect.arrayContaining([CLI, 'daemon', launched.stateDir]));
    // Idle: the start's own garbage collected (daemon/main.ts), the tails' first scans done.
    await sleep(1_500);
    const launcher = launched.launcher?.pid === undefined || launched.launcher.pid === pid ? null : processFacts(launched.launcher.pid);
    console.log(
      `launch mode ${mode}: daemon pid ${pid} RSS idle ${(processFacts(pid).rssKb / 1024).toFixed(1)} MB` +
        (launcher === null ? '' : ` · the process it was launched by (${launcher.argv.slice(0, 2).join(' ')}) ${(launcher.rssKb / 1024).toFixed(1)} MB`),
    );
  });

  it('`handoff daemon` started again with the flags ends as the daemon ends: a signal reaches it once, the exit code comes back', async () => {
    const stateDir = tempDir('state');
    const launcher = spawn(process.execPath, [CLI, 'daemon', '--state-dir', stateDir, '--port', '0', '--json'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    launcher.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const pid = await daemonPid(stateDir);
    expect(processFacts(pid).ppid).toBe(launcher.pid);
    // A second daemon on the same state dir: refused with its own exit code, through the same relaunch.
    const second = await cli(stateDir, ['daemon', '--json']);
    expect([second.code, second.json.code]).toEqual([75, 'daemon_already_running']);
    // Ctrl-C: one SIGINT, forwarded, is the graceful stop (a second one would end the daemon at once).
    launcher.kill('SIGINT');
    expect(await exited(launcher)).toBe(0);
    expect((JSON.parse(stdout) as { code: string }).code).toBe('daemon_stopping');
    expect(existsSync(join(stateDir, 'daemon.json'))).toBe(false);
  });
});
