import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manifest } from '../../schemas/index.js';
import { cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git } from '../support/git.js';
import { busyRepo } from '../support/scenario.js';

let daemon: DaemonProcess;
beforeAll(async () => {
  daemon = await startDaemon();
});
afterAll(async () => {
  await daemon.stop();
});

describe('what the repository supplies never blocks a drain', () => {
  it('a branch name over 1,000 characters: the drain reaches HANDOFF_READY, the manifest clips the name visibly (issue 17, finding 9)', async () => {
    const { root } = busyRepo();
    // Six 200-character components: a name git accepts, longer than the manifest's 1,000.
    const branch = Array.from({ length: 6 }, (_, i) => `${String(i)}${'b'.repeat(199)}`).join('/');
    git(root, 'checkout', '-q', '-b', branch);
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code, JSON.stringify(now.json.error)).toBe('handoff_ready');
    const cycle = String((now.json.data?.['cycle'] as { id: string }).id);
    const manifest = JSON.parse(readFileSync(join(root, '.session-handoff', cycle, 'manifest.json'), 'utf8')) as Manifest;
    expect(manifest.repository.branch).toHaveLength(1000);
    expect(manifest.repository.branch?.endsWith('…')).toBe(true);
    expect(branch.startsWith(String(manifest.repository.branch).slice(0, -1))).toBe(true);
  });
});
