import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { hasLfs, pathWithoutLfs } from '../support/lfs.js';

let daemon: DaemonProcess;
beforeAll(async () => {
  daemon = await startDaemon();
});
afterAll(async () => {
  await daemon.stop();
});

/**
 * A repository using Git LFS whose remote has none of its objects: main went up without the
 * pre-push hook, and a new LFS file is still untracked. The hook git-lfs installed only leaves a marker.
 */
function lfsRepo(): { root: string; remote: string; marker: string; files: Record<string, Buffer> } {
  const base = tempDir('lfs');
  const remote = join(base, 'remote.git');
  const root = join(base, 'work');
  git(base, 'init', '-q', '--bare', remote);
  git(base, 'init', '-q', '-b', 'main', root);
  git(root, 'lfs', 'install', '--local');
  git(root, 'lfs', 'track', '*.bin');
  const files = { 'committed.bin': randomBytes(3000), 'new.bin': randomBytes(5000) };
  writeFileSync(join(root, 'committed.bin'), files['committed.bin']);
  writeFileSync(join(root, 'README.md'), '# lfs\n');
  git(root, 'add', '.');
  git(root, 'commit', '-q', '-m', 'initial');
  git(root, 'remote', 'add', 'origin', remote);
  git(root, 'push', '-q', '--no-verify', '-u', 'origin', 'main');
  writeFileSync(join(root, 'new.bin'), files['new.bin']);
  const marker = join(base, 'pre-push-ran');
  const hook = join(root, '.git', 'hooks', 'pre-push');
  writeFileSync(hook, `#!/bin/sh\ntouch '${marker}'\nexit 1\n`);
  chmodSync(hook, 0o755);
  return { root, remote, marker, files };
}

describe.skipIf(!hasLfs)('Git LFS content travels on purpose, not by hook', () => {
  it('a fresh clone of the remote fetches every LFS object of the checkpoint; the pre-push hook never ran', async () => {
    const { root, remote, marker, files } = lfsRepo();
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code, now.json.error?.message).toBe('handoff_ready');
    expect(existsSync(marker)).toBe(false);
    const cycle = now.json.data?.['cycle'] as { id: string; drain: { steps: Record<string, { summary: Record<string, unknown> }> } };
    expect(cycle.drain.steps['publish']?.summary['lfs_objects']).toBe(2);

    const clone = join(tempDir('lfs-clone'), 'clone');
    execFileSync('git', ['clone', '-q', remote, clone], { env: { ...process.env, GIT_LFS_SKIP_SMUDGE: '1' } });
    git(clone, 'fetch', '-q', 'origin', `refs/heads/handoff/${cycle.id}`);
    const commit = git(clone, 'rev-parse', 'FETCH_HEAD');
    git(clone, 'lfs', 'fetch', 'origin', commit);
    for (const [path, bytes] of Object.entries(files)) {
      const pointer = execFileSync('git', ['cat-file', 'blob', `${commit}:${path}`], { cwd: clone });
      expect(pointer.toString('utf8')).toMatch(/^version https:\/\/git-lfs/);
      const content = execFileSync('git', ['lfs', 'smudge', path], { cwd: clone, input: pointer });
      expect(content.equals(bytes)).toBe(true);
    }
  });

  it('without git-lfs on the daemon’s PATH the checkpoint is a blocked reason that says so', async () => {
    const { root } = lfsRepo();
    const bin = pathWithoutLfs();
    const stateDir = tempDir('state');
    chmodSync(stateDir, 0o700);
    writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ git_timeout_seconds: 20 }));
    const other = await startDaemon(stateDir, { PATH: bin });
    try {
      const now = await cli(other.stateDir, ['now', '--no-wait', '--json'], root);
      expect(now.json.code).toBe('drain_blocked');
      // The repository's own LFS filter already needs git-lfs when the work tree is read.
      expect(now.json.error?.message).toMatch(/git-lfs is not installed/);
      const status = await cli(other.stateDir, ['status', '--json'], root);
      expect(String(status.json.data?.['blocked'])).toMatch(/git-lfs is not installed/);
      // With the filter switched off locally the work tree reads, and the pointer already committed is what cannot travel.
      writeFileSync(join(root, '.git', 'info', 'attributes'), '*.bin -filter\n');
      writeFileSync(join(root, 'committed.bin'), execFileSync('git', ['cat-file', 'blob', 'HEAD:committed.bin'], { cwd: root }));
      const resumed = await cli(other.stateDir, ['resume', '--json'], root);
      expect(resumed.json.code).toBe('drain_blocked');
      expect(resumed.json.error?.message).toMatch(/holds 1 Git LFS pointer\(s\) and git-lfs is not installed.*\(install git-lfs\)/);
    } finally {
      await other.stop();
    }
    expect(readFileSync(join(root, 'new.bin')).length).toBe(5000);
  });
});
