import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, startDaemon, until } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('a daemon killed with -9 in the middle of a drain (issue 32, 6)', () => {
  it('takes its validation command with it, and the CLI that followed the drain says `handoff resume`', async () => {
    const stateDir = tempDir('state');
    const marks = tempDir('marks');
    const pidFile = join(marks, 'validation.pid');
    // The command and a grandchild it starts: both must die with the daemon.
    writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ validation: { command: `sleep 300 & echo $! > ${pidFile}; wait`, timeout_seconds: 600 } }));
    const daemon = await startDaemon(stateDir);
    const repo = tempRepo();
    const now = spawn(process.execPath, [CLI, '--state-dir', stateDir, 'now', '--no-wait'], { cwd: repo, env: { ...process.env, HANDOFF_NO_AUTO_START: '1' } });
    let stderr = '';
    now.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exit = new Promise<number | null>((resolve) => now.once('exit', resolve));
    const sleeper = await until(
      'the validation command runs',
      async () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) || undefined : undefined),
      60_000,
    );
    expect(alive(sleeper)).toBe(true);

    await daemon.kill9();
    expect(await until('the validation command is gone', async () => (alive(sleeper) ? undefined : true), 10_000)).toBe(true);
    expect(await exit).toBe(69);
    expect(stderr).toMatch(/hint: the drain stopped with the daemon; nothing of yours was changed: `handoff resume` runs it on/);
  });
});
