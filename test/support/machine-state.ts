import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './git.js';

/**
 * The state dir of one "machine" in the tests that run two daemons as two machines sharing only a
 * bare remote: private as the daemon requires, and a git timeout short enough that an unreachable
 * remote is named within a test's patience.
 */
export function machineStateDir(): string {
  const dir = tempDir('state');
  chmodSync(dir, 0o700);
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ git_timeout_seconds: 10 }));
  return dir;
}
