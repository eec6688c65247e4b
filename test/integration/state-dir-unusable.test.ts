import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from '../support/daemon.js';
import { tempDir } from '../support/git.js';

/** The CLI with a deadline well under a hang: the old recursive mkdir on /proc never returned. */
function handoff(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stderr: string; killed: boolean }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: tempDir('cwd'), timeout: 15_000, env: { ...process.env, ...env } }, (error, _stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stderr, killed: error?.killed ?? false });
    });
  });
}

const file = () => {
  const path = join(tempDir('file'), 'a-file');
  writeFileSync(path, '');
  return path;
};

describe('a state dir that cannot be made or written (issue 32, 5)', () => {
  const cases: [string, () => string, RegExp][] = [
    // Linux answers ENOENT for a new name under /proc although /proc exists: Node's recursive mkdir spun forever on it.
    ['under /proc', () => '/proc/handoff-state', /the file system does not allow creating it \(ENOENT\)/],
    ['with a file in the way', () => join(file(), 'state'), /a part of the path is a file, not a directory \(ENOTDIR\)/],
  ];
  for (const [name, dir, cause] of cases) {
    it(`${name}: status (starting a daemon on demand) and the daemon itself answer one line of cause and a hint, exit 77`, async () => {
      const stateDir = dir();
      for (const args of [['status'], ['daemon']]) {
        const run = await handoff([...args, '--state-dir', stateDir], { HANDOFF_NO_AUTO_START: '' });
        expect(run.killed, `${args[0]} hung`).toBe(false);
        expect(run.code, run.stderr).toBe(77);
        expect(run.stderr).toMatch(
          new RegExp(
            `^error: cannot make or write the state dir ${stateDir}: ${cause.source}\\nhint: give a writable directory with --state-dir DIR or HANDOFF_STATE_DIR`,
          ),
        );
        expect(run.stderr).not.toMatch(/a bug in handoff/);
      }
    });
  }
});
