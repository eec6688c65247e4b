import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { ALREADY_RUNNING_EXIT, NO_AUTO_START_ENV } from '../../daemon/cli/auto-start.js';
import { exitCodeOf, failure } from '../../protocol/index.js';
import { CLI, startDaemon, type CliResult } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { twoClones } from '../support/scenario.js';

/** The environment of a user who did not turn auto-start off (the suite's config turns it off for every other test). */
function userEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== NO_AUTO_START_ENV));
}

function run(stateDir: string, args: readonly string[], cwd: string): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, '--state-dir', stateDir, ...args, '--json'],
      { cwd, env: userEnv(), encoding: 'utf8', timeout: 40_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        // An empty stdout (a killed run) fails the test's assertions with the stderr, not the whole file.
        resolve({
          code,
          stdout,
          stderr,
          json: stdout === '' ? { code: `no output: ${stderr}`, data: null, authority: '' } : (JSON.parse(stdout) as CliResult['json']),
        });
      },
    );
  });
}

/** Every live `handoff daemon` process serving `stateDir`, read from /proc (the started daemons are not our children). */
function daemonsOf(stateDir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    let stat: string;
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8').replace(/^.*\) /, '');
    } catch {
      continue; // the process ended while the list was read (ENOENT, or ESRCH between the two reads)
    }
    if (stat.startsWith('Z')) continue;
    if (args.includes(CLI) && args.includes('daemon') && args.includes(stateDir) && !args.includes('stop')) pids.push(Number(entry));
  }
  return pids;
}

const started: string[] = [];
afterEach(async () => {
  for (const stateDir of started.splice(0)) {
    for (const pid of daemonsOf(stateDir)) process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 200 && daemonsOf(stateDir).length > 0; i += 1) await sleep(50);
  }
});

function stateDir(config?: object): string {
  const dir = tempDir('state');
  if (config !== undefined) writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  started.push(dir);
  return dir;
}

describe('the daemon starts when a command needs it and none answers', () => {
  it('a command with no daemon running starts one, detached, with its output in autostart.log, and is answered', async () => {
    const repo = twoClones().a;
    const dir = stateDir();
    const status = await run(dir, ['status'], repo);
    expect([status.code, status.json.code]).toEqual([0, 'status']);
    expect(status.stderr).toMatch(/no daemon answered for .*; started one/);
    const [pid] = daemonsOf(dir);
    expect((status.json.data?.['daemon'] as { pid: number }).pid).toBe(pid);
    // Started as the service unit starts it: with the daemon's V8 flags before the CLI (daemon/node-flags.ts).
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(1, 3)).toEqual(['--max-semi-space-size=1', CLI]);
    expect(readFileSync(join(dir, 'autostart.log'), 'utf8')).toMatch(
      /started by pid \d+ because no daemon answered\n.*handoff daemon listening on 127\.0\.0\.1:\d+ \(pid \d+/,
    );
    // The next command finds it: nothing more is started.
    expect((await run(dir, ['status'], repo)).stderr).toBe('');
    expect(daemonsOf(dir)).toEqual([pid]);
  });

  it("after a crash, with a squatter on the dead daemon's port: the command starts a new daemon and the squatter receives nothing", async () => {
    const repo = twoClones().a;
    const dir = stateDir();
    const crashed = await startDaemon(dir);
    await crashed.kill9();
    let connections = 0;
    const squatter = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => squatter.listen(crashed.port, '127.0.0.1', resolve));
    try {
      const status = await run(dir, ['status'], repo);
      expect([status.code, status.json.code]).toEqual([0, 'status']);
      expect((status.json.data?.['daemon'] as { pid: number; port: number }).pid).not.toBe(crashed.pid);
      expect((status.json.data?.['daemon'] as { port: number }).port).not.toBe(crashed.port);
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  it('four commands at once with no daemon leave exactly one daemon, and each is answered', async () => {
    const repo = twoClones().a;
    const dir = stateDir();
    const answers = await Promise.all([1, 2, 3, 4].map(() => run(dir, ['status'], repo)));
    expect(answers.map((a) => [a.code, a.json.code])).toEqual([1, 2, 3, 4].map(() => [0, 'status']));
    const pids = new Set(answers.map((a) => (a.json.data?.['daemon'] as { pid: number }).pid));
    expect(pids.size).toBe(1);
    // The starters that lost the instance guard have exited; the winner is the only one left.
    for (let i = 0; i < 100 && daemonsOf(dir).length > 1; i += 1) await sleep(50);
    expect(daemonsOf(dir)).toEqual([...pids]);
    const log = readFileSync(join(dir, 'autostart.log'), 'utf8');
    console.log(
      `auto-start: ${log.match(/started by pid/g)?.length ?? 0} starts for 4 concurrent commands, ${log.match(/already serves/g)?.length ?? 0} refused by the instance guard`,
    );
  });

  it('`auto_start: false` in the config: nothing is started, and the hint says why and how', async () => {
    const repo = twoClones().a;
    const dir = stateDir({ auto_start: false });
    const status = await run(dir, ['status'], repo);
    expect([status.code, status.json.code]).toEqual([69, 'daemon_unreachable']);
    expect(status.json.error?.hint).toMatch(/handoff service install.*auto_start is false in .*config\.json/);
    expect(daemonsOf(dir)).toEqual([]);
    expect(existsSync(join(dir, 'autostart.log'))).toBe(false);
  });

  it('`handoff daemon stop` with no daemon running starts none, and is done (0, like `systemctl stop`)', async () => {
    const dir = stateDir();
    const stop = await run(dir, ['daemon', 'stop'], dir);
    expect([stop.code, stop.json.code]).toEqual([0, 'daemon_not_running']);
    expect(daemonsOf(dir)).toEqual([]);
  });

  it('the SessionStart hook starts the daemon and the session is recorded by it', async () => {
    const repo = twoClones().a;
    const dir = stateDir();
    const hook = spawn(process.execPath, [CLI, 'hook', 'claude-session-start', '--state-dir', dir], {
      cwd: repo,
      env: userEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    hook.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    hook.stdin.end(JSON.stringify({ hook_event_name: 'SessionStart', session_id: 's-1', cwd: repo }));
    const code = await new Promise<number | null>((resolve) => hook.once('exit', resolve));
    expect([code, stderr]).toEqual([0, '']);
    expect(daemonsOf(dir)).toHaveLength(1);
    const status = await run(dir, ['status'], repo);
    expect([status.json.code, status.json.data?.['workspace']]).toEqual(['status', repo]);
  });

  it('the SessionStart hook with `auto_start: false`: the daemon it starts reads the config and stops, and the hook says where to look', async () => {
    const repo = twoClones().a;
    const dir = stateDir({ auto_start: false });
    const hook = spawn(process.execPath, [CLI, 'hook', 'claude-session-start', '--state-dir', dir], {
      cwd: repo,
      env: userEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    hook.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    hook.stdin.end(JSON.stringify({ hook_event_name: 'SessionStart', session_id: 's-1', cwd: repo }));
    expect(await new Promise<number | null>((resolve) => hook.once('exit', resolve))).toBe(0);
    expect(stderr).toBe(`handoff: the daemon started for ${dir} exited with 69; see ${join(dir, 'autostart.log')}\n`);
    expect(readFileSync(join(dir, 'autostart.log'), 'utf8')).toMatch(/error: not started by itself: auto_start is false in .*config\.json/);
    expect(daemonsOf(dir)).toEqual([]);
  });

  it('the status line says the daemon is down at once and starts one in the background, at most once per interval', async () => {
    const repo = twoClones().a;
    const dir = stateDir();
    const line = () =>
      new Promise<string>((resolve) => {
        const hook = execFile(
          process.execPath,
          [CLI, 'hook', 'claude-statusline', '--state-dir', dir],
          { cwd: repo, env: userEnv(), encoding: 'utf8' },
          (_error, stdout) => resolve(stdout),
        );
        hook.stdin?.end(JSON.stringify({ session_id: 's-1', cwd: repo, model: { id: 'claude' } }));
      });
    expect(await line()).toBe('handoff: daemon down\n');
    // The next refresh: still down (the daemon is starting), or already answered by it.
    expect(await line()).toMatch(/^handoff(: daemon down| NORMAL)\n$/);
    for (let i = 0; i < 400 && daemonsOf(dir).length === 0; i += 1) await sleep(50);
    expect(daemonsOf(dir)).toHaveLength(1);
    expect(readFileSync(join(dir, 'autostart.log'), 'utf8').match(/started by pid/g)).toHaveLength(1);
  });

  it('a broken config is reported by the command itself, and nothing is started', async () => {
    const repo = twoClones().a;
    const dir = stateDir();
    writeFileSync(join(dir, 'config.json'), '{ not json');
    const status = await run(dir, ['status'], repo);
    // The CLI reads the config before starting anything: the user sees the config error itself.
    expect([status.code, status.json.code]).toEqual([65, 'invalid_config']);
    expect(daemonsOf(dir)).toEqual([]);
  });

  it('the exit code a losing starter waits past is daemon_already_running’s', () => {
    expect(ALREADY_RUNNING_EXIT).toBe(exitCodeOf(failure('daemon_already_running', '', '')));
  });
});

describe('a receiver in a fresh clone', () => {
  it('`handoff accept --latest --from origin --as X` works with no daemon running there', async () => {
    const { a, remote } = twoClones();
    const source = await startDaemon(tempDir('state'));
    try {
      writeFileSync(join(a, 'f.txt'), 'one\nfrom the source\n');
      const now = await run(source.stateDir, ['now', '--no-wait'], a);
      expect(now.json.code).toBe('handoff_ready');
    } finally {
      await source.stop();
    }
    const clone = join(tempDir('sandbox'), 'clone');
    git(a, 'clone', '-q', remote, clone);
    const dir = stateDir();
    const accepted = await run(dir, ['accept', '--latest', '--from', 'origin', '--as', 'cloud-agent', '--checkout'], clone);
    expect([accepted.code, accepted.json.code], JSON.stringify(accepted.json)).toEqual([0, 'accepted']);
    expect(accepted.json.data).toMatchObject({ state: 'TAKEOVER', from: 'origin' });
    expect(readFileSync(join(clone, 'f.txt'), 'utf8')).toBe('one\nfrom the source\n');
    expect(daemonsOf(dir)).toHaveLength(1);
    // Taken: the remote offers it no more, and `--latest` says so rather than guessing.
    const again = await run(stateDir(), ['accept', '--latest', '--from', 'origin', '--as', 'another'], clone);
    expect([again.code, again.json.code, again.json.error?.message]).toEqual([10, 'unknown_cycle', "'origin' offers no cycle"]);
    // Three daemons start and a drain pushes to the remote: more than the default on a loaded machine.
  }, 120_000);
});
