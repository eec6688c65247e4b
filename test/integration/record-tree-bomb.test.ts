import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git } from '../support/git.js';
import { twoClones } from '../support/scenario.js';
import { machineStateDir } from '../support/machine-state.js';

let source: DaemonProcess;
beforeAll(async () => {
  // No periodic lease sync: one begun before the bomb is pushed would answer the status below without it.
  source = await startDaemon(machineStateDir());
});
afterAll(async () => {
  await source.stop();
});

const input = (cwd: string, args: string[], text: string) => execFileSync('git', args, { cwd, input: text, encoding: 'utf8' }).trim();
/** The most memory the daemon process held, in MB (VmHWM); reset to what it holds now by `clear_refs`. */
const peakMb = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const resetPeak = (pid: number) => writeFileSync(`/proc/${pid}/clear_refs`, '5');

/**
 * A tree bomb: 16 trees deep 5 levels, each entry the same subtree, so a few hundred bytes of
 * objects list as 16^5 = 1,048,576 files. Next to it, the cycle's own valid lease.json.
 */
function treeBomb(cwd: string, leaseBlob: string): string {
  const leaf = input(cwd, ['hash-object', '-w', '--stdin'], 'x\n');
  let tree = input(cwd, ['mktree'], Array.from({ length: 16 }, (_, i) => `100644 blob ${leaf}\tf${i}\n`).join(''));
  for (let level = 0; level < 4; level++) tree = input(cwd, ['mktree'], Array.from({ length: 16 }, (_, i) => `040000 tree ${tree}\td${i}\n`).join(''));
  return input(cwd, ['mktree'], `100644 blob ${leaseBlob}\tlease.json\n040000 tree ${tree}\tbomb\n`);
}

describe('a hostile records commit is bounded before git lists it', () => {
  it(
    'a tree bomb pushed onto the lease ref: status answers promptly, the record is refused with its reason, the daemon’s memory stays flat',
    { timeout: 180_000 },
    async () => {
      const { a, b, remote } = twoClones();
      writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
      const now = await cli(source.stateDir, ['now', '--no-wait', '--json'], a);
      expect(now.json.code, JSON.stringify(now.json)).toBe('handoff_ready');
      const cycle = (now.json.data?.['cycle'] as { id: string }).id;
      const ref = `refs/handoff/lease/${cycle}`;
      // Whoever can push to the remote: a fast-forward of the lease chain, carrying the bomb.
      git(b, 'fetch', '-q', 'origin', `${ref}:${ref}`);
      const root = treeBomb(b, git(b, 'rev-parse', `${ref}:lease.json`));
      const bomb = git(b, 'commit-tree', root, '-p', ref, '-m', 'taken');
      git(b, 'push', '-q', 'origin', `${bomb}:${ref}`);
      expect(git(remote, 'rev-parse', ref)).toBe(bomb);

      resetPeak(source.pid);
      const before = peakMb(source.pid);
      const started = performance.now();
      const status = await api(source, 'GET', `/v1/status?repo=${encodeURIComponent(a)}`);
      const seconds = (performance.now() - started) / 1000;
      expect(status.status).toBe(200);
      const data = status.body.data as { state: string; lease_sync: { error: string | null } };
      expect(data.state).toBe('HANDOFF_READY');
      expect(data.lease_sync.error).toMatch(
        new RegExp(`${ref} on 'origin' is refused: (it holds more than 64 files and directories|its tree is more than 4 levels deep)`),
      );
      // Loose bounds for a loaded machine: listing the bomb whole took git tens of seconds and the daemon hundreds of MB.
      expect(seconds).toBeLessThan(30);
      expect(peakMb(source.pid) - before).toBeLessThan(60);
    },
  );
});
