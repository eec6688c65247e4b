import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, cli, startDaemon, until } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';
import { fixtureText, piped } from './ingest-support.js';

const corpusText = (path: string) => readFileSync(new URL(`../fixtures/telemetry/${path}`, import.meta.url), 'utf8');

const SPOOLED = /^\d{13}-[0-9a-f]{12}\.json$/;

function privateStateDir(): string {
  const dir = tempDir('state');
  chmodSync(dir, 0o700);
  return dir;
}

const stopFailure = (repo: string) => fixtureText('claude-hooks/StopFailure.rate_limit.json').replaceAll('/home/dev/acme-api', repo);
const stateOf = async (stateDir: string, repo: string) => String((await cli(stateDir, ['status', '--json'], repo)).json.data?.['state']);
const evacuating = (stateDir: string, repo: string) =>
  until(
    'EVACUATE from the spooled StopFailure',
    async () => (['EVACUATE', 'HANDOFF_READY'].includes(await stateOf(stateDir, repo)) ? true : undefined),
    20_000,
  );

describe('claude-event hands its payload off through the spool, so a killed hook still delivers', () => {
  it('killed (SIGKILL) the moment its payload is safe, with no daemon running: the daemon delivers it when it starts', async () => {
    const stateDir = privateStateDir();
    const repo = tempRepo();
    const spool = join(stateDir, 'spool');
    mkdirSync(spool, { mode: 0o700 });
    const child = spawn(process.execPath, [CLI, 'hook', 'claude-event', '--state-dir', stateDir], { stdio: ['pipe', 'ignore', 'ignore'] });
    // What headless Claude Code does ~90 ms in: kill the hook. Here: as soon as the payload has its final name.
    const safe = new Promise<void>((resolve) => {
      const watcher = watch(spool, () => {
        if (readdirSync(spool).some((name) => SPOOLED.test(name))) {
          child.kill('SIGKILL');
          watcher.close();
          resolve();
        }
      });
    });
    child.stdin.end(stopFailure(repo));
    await safe;
    await new Promise((resolve) => child.once('exit', resolve));
    const daemon = await startDaemon(stateDir);
    try {
      await evacuating(stateDir, repo);
      expect(readdirSync(spool)).toEqual([]);
    } finally {
      await daemon.stop();
    }
  });

  it('with the daemon running, it takes the payload as it appears and removes it', async () => {
    const daemon = await startDaemon(privateStateDir());
    try {
      const repo = tempRepo();
      const run = await piped(['hook', 'claude-event', '--state-dir', daemon.stateDir], stopFailure(repo));
      expect([run.code, run.stdout, run.stderr]).toEqual([0, '', '']);
      await evacuating(daemon.stateDir, repo);
      await until('the spool emptied', async () => (readdirSync(join(daemon.stateDir, 'spool')).length === 0 ? true : undefined));
    } finally {
      await daemon.stop();
    }
  });

  it('a payload spooled long ago (older than the freshness window) is dropped at start, not replayed as news', async () => {
    const stateDir = privateStateDir();
    const repo = tempRepo();
    const spool = join(stateDir, 'spool');
    mkdirSync(spool, { mode: 0o700 });
    const old = join(spool, `${String(Date.now() - 3_600_000).padStart(13, '0')}-0123456789ab.json`);
    writeFileSync(old, stopFailure(repo), { mode: 0o600 });
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(old, hourAgo, hourAgo);
    const daemon = await startDaemon(stateDir);
    try {
      expect(existsSync(old)).toBe(false);
      expect(await stateOf(stateDir, repo)).toBe('NORMAL');
    } finally {
      await daemon.stop();
    }
  });

  it('the StopFailure hook as installed is a shell line that spools before any node starts; the daemon evacuates on it', async () => {
    const daemon = await startDaemon(privateStateDir());
    try {
      const settings = join(tempDir('claude'), 'settings.json');
      expect((await cli(daemon.stateDir, ['install', 'claude', '--settings', settings, '--json'])).code).toBe(0);
      const installed = JSON.parse(readFileSync(settings, 'utf8')) as { hooks: { StopFailure: { hooks: { command: string }[] }[] } };
      const command = installed.hooks.StopFailure[0]?.hooks[0]?.command ?? '';
      expect(command).toMatch(/^d='.*\/spool'; .* # handoff hook claude-event$/);
      const repo = tempRepo();
      // Claude Code runs it through a shell with the payload on stdin; PATH as narrow as a sandbox's.
      execFileSync('/bin/sh', ['-c', command], { input: stopFailure(repo), env: { PATH: '/usr/bin:/bin' } });
      await evacuating(daemon.stateDir, repo);
      const again = await cli(daemon.stateDir, ['install', 'claude', '--settings', settings, '--json']);
      expect((again.json.data as { files: { action: string }[] }).files.map((file) => file.action)).toEqual(['unchanged', 'unchanged']);
    } finally {
      await daemon.stop();
    }
  });

  it("SessionEnd, which headless Claude Code waits for: the daemon finds the stop in the session's transcript, and only a fresh one of that session", async () => {
    const daemon = await startDaemon(privateStateDir());
    try {
      const settings = join(tempDir('claude'), 'settings.json');
      expect((await cli(daemon.stateDir, ['install', 'claude', '--settings', settings, '--json'])).code).toBe(0);
      const installed = JSON.parse(readFileSync(settings, 'utf8')) as { hooks: { SessionEnd: { hooks: { command: string }[] }[] } };
      const command = installed.hooks.SessionEnd[0]?.hooks[0]?.command ?? '';
      const sessionEnd = (repo: string, transcript: string, session: string) =>
        execFileSync('/bin/sh', ['-c', command], {
          input: JSON.stringify({ session_id: session, transcript_path: transcript, cwd: repo, hook_event_name: 'SessionEnd', reason: 'other' }),
          env: { PATH: '/usr/bin:/bin' },
        });
      // The record Claude Code 2.1.328 wrote in `claude -p` on a rejected five-hour limit, then its bookkeeping lines.
      const transcriptOf = (repo: string, session: string, at: Date) => {
        const record = {
          ...JSON.parse(corpusText('claude-transcript/2.1.328-p-usage-limit.json')),
          cwd: repo,
          sessionId: session,
          timestamp: at.toISOString(),
        };
        const path = join(tempDir('transcript'), `${session}.jsonl`);
        writeFileSync(
          path,
          [JSON.stringify({ type: 'user', sessionId: session }), JSON.stringify(record), JSON.stringify({ type: 'last-prompt', sessionId: session }), ''].join(
            '\n',
          ),
        );
        return path;
      };

      const stale = tempRepo();
      sessionEnd(stale, transcriptOf(stale, 'session-old', new Date(Date.now() - 3_600_000)), 'session-old');
      const other = tempRepo();
      sessionEnd(other, transcriptOf(other, 'session-a', new Date()), 'session-b');
      const repo = tempRepo();
      sessionEnd(repo, transcriptOf(repo, 'session-1', new Date()), 'session-1');
      await evacuating(daemon.stateDir, repo);
      const warnings = (await cli(daemon.stateDir, ['status', '--json'], repo)).json.data?.['warnings'];
      expect(warnings).toEqual([expect.objectContaining({ source: 'claude-hook', kind: 'rate_limit', executor: 'session-1' })]);
      // All three were taken; the stale stop and the one of another session moved nothing.
      await until('the spool emptied', async () => (readdirSync(join(daemon.stateDir, 'spool')).length === 0 ? true : undefined));
      expect(await stateOf(daemon.stateDir, stale)).toBe('NORMAL');
      expect(await stateOf(daemon.stateDir, other)).toBe('NORMAL');
    } finally {
      await daemon.stop();
    }
  });

  it('a state dir that is not private is not written into: the hook says so and exits 0', async () => {
    const open = tempDir('open');
    chmodSync(open, 0o755);
    const run = await piped(['hook', 'claude-event', '--state-dir', open], stopFailure(tempRepo()));
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('the event was not recorded');
    expect(existsSync(join(open, 'spool'))).toBe(false);
  });
});
