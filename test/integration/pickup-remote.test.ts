import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
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

describe('the pickup names a remote that works from any directory', () => {
  it('a relative local remote (../remote.git) is printed absolute, and the recovery commands run elsewhere', async () => {
    const { root, remote } = busyRepo();
    git(root, 'remote', 'set-url', 'origin', '../remote.git');
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code).toBe('handoff_ready');
    const cycle = String((now.json.data?.['cycle'] as { id: string }).id);
    const manifest = JSON.parse(readFileSync(join(root, '.session-handoff', cycle, 'manifest.json'), 'utf8')) as { repository: { remote_url: string } };
    expect(manifest.repository.remote_url).toBe(remote);
    const handoff = readFileSync(join(root, '.session-handoff', cycle, 'HANDOFF.md'), 'utf8');
    expect(handoff).toContain(`git clone --no-checkout '${remote}' 'handoff-${cycle}'`);
    // The commands of the recovery block, run as written, in an empty directory elsewhere.
    const block = /```sh\n([\s\S]*?)```/.exec(handoff.slice(handoff.indexOf('git clone --no-checkout') - 200))?.[1] ?? '';
    expect(block).toContain('git clone');
    const elsewhere = tempDir('elsewhere');
    execFileSync('/bin/sh', ['-e', '-c', block], { cwd: elsewhere, stdio: 'pipe' });
    expect(readFileSync(join(elsewhere, `handoff-${cycle}`, 'notes.md'), 'utf8')).toBe('untracked notes\n');
  });
});
