import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { unlinkSync, writeFileSync } from 'node:fs';
import { readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireInstanceGuard, isProcessAlive } from '../../../daemon/store/index.js';
import { commandLineMayBeDaemon } from '../../../daemon/store/process-liveness.js';
import { deadPid, handoffErrorOf, requirePid, tempDir } from './fixtures.js';

const lockOf = (dir: string): string => join(dir, 'daemon.lock');

describe('acquireInstanceGuard', () => {
  it('writes a lock holding our pid and removes it on release', async () => {
    const dir = await tempDir();
    const guard = await acquireInstanceGuard(dir, process.pid);
    expect(await readFile(lockOf(dir), 'utf8')).toBe(`${process.pid}\n`);
    expect(await readdir(dir)).toEqual(['daemon.lock']);
    await guard.release();
    expect(await readdir(dir)).toEqual([]);
    await guard.release();
  });

  it('refuses a second daemon while the lock names a live pid', async () => {
    const dir = await tempDir();
    const first = await acquireInstanceGuard(dir, process.pid);
    const error = await handoffErrorOf(acquireInstanceGuard(dir, process.pid + 1));
    expect(error.code).toBe('daemon_already_running');
    expect(error.message).toBe(`another daemon (pid ${process.pid}) already serves ${dir}`);
    expect(error.hint).toContain('handoff daemon stop');
    expect(await readFile(lockOf(dir), 'utf8')).toBe(`${process.pid}\n`);
    await first.release();
  });

  it('takes over a lock left by a dead pid', async () => {
    const dir = await tempDir();
    const dead = await deadPid();
    expect(isProcessAlive(dead)).toBe(false);
    await writeFile(lockOf(dir), `${dead}\n`, { mode: 0o600 });
    const guard = await acquireInstanceGuard(dir, process.pid);
    expect(await readFile(lockOf(dir), 'utf8')).toBe(`${process.pid}\n`);
    expect(await readdir(dir)).toEqual(['daemon.lock']);
    await guard.release();
  });

  it('takes over a lock with garbage content or a planted symlink', async () => {
    const dir = await tempDir();
    await writeFile(lockOf(dir), 'not a pid');
    const first = await acquireInstanceGuard(dir, process.pid);
    await first.release();

    const victim = join(dir, 'victim');
    await writeFile(victim, `${process.pid}\n`);
    await symlink(victim, lockOf(dir));
    const second = await acquireInstanceGuard(dir, process.pid + 1, () => true);
    expect(await readFile(lockOf(dir), 'utf8')).toBe(`${process.pid + 1}\n`);
    expect(await readFile(victim, 'utf8')).toBe(`${process.pid}\n`);
    await second.release();
  });

  it('takes over a lock naming our own pid, left by an earlier run in the same pid namespace', async () => {
    const dir = await tempDir();
    await writeFile(lockOf(dir), `${process.pid}\n`);
    const guard = await acquireInstanceGuard(dir, process.pid, () => true);
    await guard.release();
    expect(await readdir(dir)).toEqual([]);
  });

  it.skipIf(process.platform !== 'linux')('treats a live pid running an unrelated program as reused', async () => {
    const dir = await tempDir();
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const pid = requirePid(sleeper);
      await once(sleeper, 'spawn');
      expect(isProcessAlive(pid)).toBe(false);
      await writeFile(lockOf(dir), `${pid}\n`);
      const guard = await acquireInstanceGuard(dir, process.pid);
      expect(await readFile(lockOf(dir), 'utf8')).toBe(`${process.pid}\n`);
      await guard.release();
    } finally {
      sleeper.kill();
    }
  });

  it('release leaves a lock that is no longer ours', async () => {
    const dir = await tempDir();
    const guard = await acquireInstanceGuard(dir, process.pid);
    await writeFile(lockOf(dir), '999999\n');
    await guard.release();
    expect(await readFile(lockOf(dir), 'utf8')).toBe('999999\n');
  });

  it('does not remove a lock another starter put in place after the stale one was judged', async () => {
    const dir = await tempDir();
    const stale = 999_999;
    const racer = 777_777;
    await writeFile(lockOf(dir), `${stale}\n`);
    // isAlive runs between reading the lock and removing it: the exact window a racing starter hits.
    const isAlive = (pid: number): boolean => {
      if (pid !== stale) return pid === racer;
      unlinkSync(lockOf(dir));
      writeFileSync(lockOf(dir), `${racer}\n`);
      return false;
    };
    const error = await handoffErrorOf(acquireInstanceGuard(dir, process.pid, isAlive));
    expect(error.code).toBe('daemon_already_running');
    expect(error.message).toContain(`pid ${racer}`);
    expect(await readFile(lockOf(dir), 'utf8')).toBe(`${racer}\n`);
    expect(await readdir(dir)).toEqual(['daemon.lock']);
  });

  it('lets exactly one of many concurrent starters win', async () => {
    const dir = await tempDir();
    const pids = Array.from({ length: 8 }, (_, i) => 1_000_001 + i);
    const results = await Promise.allSettled(pids.map((pid) => acquireInstanceGuard(dir, pid, () => true)));
    expectOneWinner(results);
    const holder = Number(await readFile(lockOf(dir), 'utf8'));
    expect(pids[results.findIndex((result) => result.status === 'fulfilled')]).toBe(holder);
  });

  it('lets exactly one of many concurrent starters take over a stale lock', async () => {
    const dir = await tempDir();
    const stale = 999_999;
    await writeFile(lockOf(dir), `${stale}\n`);
    const pids = Array.from({ length: 8 }, (_, i) => 1_000_001 + i);
    const results = await Promise.allSettled(pids.map((pid) => acquireInstanceGuard(dir, pid, (p) => p !== stale)));
    expectOneWinner(results);
    expect(await readdir(dir)).toEqual(['daemon.lock']);
  });
});

describe('commandLineMayBeDaemon', () => {
  it('keeps node and handoff processes, and unreadable ones, alive', () => {
    expect(commandLineMayBeDaemon('/usr/bin/node\0/usr/lib/handoff/dist/daemon/cli/main.js\0daemon\0')).toBe(true);
    expect(commandLineMayBeDaemon('handoff-daemon\0')).toBe(true);
    expect(commandLineMayBeDaemon('')).toBe(true);
  });

  it('calls an unrelated program a reused pid', () => {
    expect(commandLineMayBeDaemon('/usr/bin/sleep\x0030\0')).toBe(false);
    expect(commandLineMayBeDaemon('bash\0')).toBe(false);
  });
});

function expectOneWinner(results: PromiseSettledResult<unknown>[]): void {
  expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
  for (const result of results) {
    if (result.status === 'rejected') {
      expect(result.reason).toMatchObject({ code: 'daemon_already_running' });
    }
  }
}
