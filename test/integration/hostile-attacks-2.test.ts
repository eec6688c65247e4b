import { chmodSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { busyRepo } from '../support/scenario.js';

let daemon: DaemonProcess;
beforeAll(async () => {
  daemon = await startDaemon();
});
afterAll(async () => {
  await daemon.stop();
});

/** A program that leaves a marker named after itself, then runs the real git program it stands in for. */
function marking(markers: string, name: string, real: string): string {
  const path = join(tempDir('program'), name);
  writeFileSync(path, `#!/bin/sh\ntouch '${markers}/${name}'\nexec ${real} "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

describe('a repository config that names the programs git runs for a remote', () => {
  it('remote.<name>.uploadpack and receivepack never run: the drain uses git-upload-pack and git-receive-pack', async () => {
    const { root, remote } = busyRepo();
    const markers = tempDir('markers');
    git(root, 'config', 'remote.origin.uploadpack', marking(markers, 'uploadpack', 'git-upload-pack'));
    git(root, 'config', 'remote.origin.receivepack', marking(markers, 'receivepack', 'git-receive-pack'));
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code).toBe('handoff_ready');
    expect(readdirSync(markers)).toEqual([]);
    const cycle = (now.json.data?.['cycle'] as { id: string }).id;
    expect(git(remote, 'rev-parse', '--verify', `refs/heads/handoff/${cycle}`)).toMatch(/^[0-9a-f]{40}$/);
    expect(existsSync(join(markers, 'uploadpack'))).toBe(false);
  });

  it('an ext:: URL reached through url.<base>.insteadOf, allowed by protocol.ext.allow, never runs its command', async () => {
    const { root, remote } = busyRepo();
    const canary = join(tempDir('canary'), 'canary');
    git(root, 'config', 'protocol.ext.allow', 'always');
    git(root, 'config', `url.ext::sh -c touch% ${canary}% ;false.insteadOf`, remote);
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code).toBe('drain_blocked');
    expect(JSON.stringify(now.json)).toMatch(/transport 'ext' not allowed/);
    expect(existsSync(canary)).toBe(false);
  });

  it('core.gitProxy never runs for a git:// URL that url.<base>.insteadOf puts in place of the remote', async () => {
    const { root, remote } = busyRepo();
    const markers = tempDir('markers');
    git(root, 'config', 'core.gitProxy', marking(markers, 'proxy', 'false'));
    git(root, 'config', 'url.git://127.0.0.1:1/remote.git.insteadOf', remote);
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code).toBe('drain_blocked');
    expect(readdirSync(markers)).toEqual([]);
  });

  it('core.alternateRefsCommand never runs when the repository has an alternate object store', async () => {
    const { root } = busyRepo();
    const markers = tempDir('markers');
    const alternate = tempDir('alternate');
    git(alternate, 'init', '-q');
    writeFileSync(join(root, '.git', 'objects', 'info', 'alternates'), `${join(alternate, '.git', 'objects')}\n`);
    git(root, 'config', 'core.alternateRefsCommand', marking(markers, 'alternate-refs', 'true'));
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code).toBe('handoff_ready');
    expect(readdirSync(markers)).toEqual([]);
  });

  it("a submodule's own remote.origin.uploadpack never runs: the daemon's fetches do not recurse into submodules", async () => {
    const { root } = busyRepo();
    const markers = tempDir('markers');
    const upstream = tempDir('submodule');
    git(upstream, 'init', '-q', '-b', 'main');
    git(upstream, 'commit', '-q', '--allow-empty', '-m', 'sub');
    git(root, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', upstream, 'sub');
    git(root, 'commit', '-q', '-m', 'submodule');
    git(root, 'push', '-q', 'origin', 'main');
    git(join(root, 'sub'), 'config', 'remote.origin.uploadpack', marking(markers, 'submodule-uploadpack', 'git-upload-pack'));
    git(root, 'config', 'fetch.recurseSubmodules', 'true');
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code).toBe('handoff_ready');
    expect(readdirSync(markers)).toEqual([]);
  });
});
