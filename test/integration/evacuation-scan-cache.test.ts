import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verdictsFile } from '../../daemon/evacuation/scan-verdicts.js';
import { cli, sharedDaemon } from '../support/daemon.js';
import { git } from '../support/git.js';
import { busyRepo } from '../support/scenario.js';
import { plantedSecrets } from '../support/secrets.js';

const shared = sharedDaemon();

interface SnapshotSummary {
  scanned: number;
  scan_cached: number;
  withheld: number;
  withheld_paths?: string;
  commit: string;
}

/** `handoff now` to HANDOFF_READY; the snapshot step's journal record, as `handoff status` shows it. */
async function evacuate(root: string): Promise<SnapshotSummary> {
  const now = await cli(shared.daemon.stateDir, ['now', '--no-wait', '--json'], root);
  expect(now.json.code).toBe('handoff_ready');
  const cycle = now.json.data?.['cycle'] as { drain: { steps: { snapshot: { summary: SnapshotSummary } } } };
  return cycle.drain.steps.snapshot.summary;
}

describe('a second evacuation of the same tree scans nothing new for secrets', () => {
  it('scans 0 files the second time, withholds the same file, and scans exactly the file a secret was planted in', async () => {
    const { root } = busyRepo();
    const secrets = plantedSecrets();
    writeFileSync(join(root, '.env'), secrets.env);
    const first = await evacuate(root);
    expect(first.scanned).toBeGreaterThan(1);
    expect(first).toMatchObject({ scan_cached: 0, withheld: 1 });
    expect(first.withheld_paths).toMatch(/^\.env /);
    expect(statSync(verdictsFile(shared.daemon.stateDir)).mode & 0o777).toBe(0o600);
    expect((await cli(shared.daemon.stateDir, ['cancel', '--json'], root)).json.code).toBe('cancelled');

    const second = await evacuate(root);
    expect(second).toMatchObject({ scanned: 0, scan_cached: first.scanned, withheld: 1, withheld_paths: first.withheld_paths });
    // The same tree: the checkpoint holds what the first one held, the .env left out both times.
    expect(git(root, 'rev-parse', `${second.commit}^{tree}`)).toBe(git(root, 'rev-parse', `${first.commit}^{tree}`));
    expect(git(root, 'ls-tree', '--name-only', second.commit)).not.toContain('.env');
    expect((await cli(shared.daemon.stateDir, ['cancel', '--json'], root)).json.code).toBe('cancelled');

    // A file the cache judged clean gets a secret: its new bytes are scanned, and it stays home.
    writeFileSync(join(root, 'src', 'app.ts'), `export const a = 3;\nexport const token = "${secrets.githubToken}";\n`);
    const third = await evacuate(root);
    expect(third).toMatchObject({ scanned: 1, scan_cached: first.scanned - 1, withheld: 2 });
    expect(third.withheld_paths).toContain('src/app.ts');
  });
});
