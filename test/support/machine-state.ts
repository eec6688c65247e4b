import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './git.js';

/**
 * The state dir of one "machine" in the tests that run two daemons as two machines sharing only a
 * bare remote: private as the daemon requires, and a git timeout short enough that an unreachable
 * remote is named within a test's patience. The periodic lease sync is off (a day): a machine learns a
 * move made elsewhere from the command that follows it, never from a background sync begun before the
 * move, which that command would share and so answer with the remote as it was.
 */
export function machineStateDir(config: object = {}): string {
  const dir = tempDir('state');
  chmodSync(dir, 0o700);
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ git_timeout_seconds: 10, lease_sync_seconds: 86_400, ...config }));
  return dir;
}
