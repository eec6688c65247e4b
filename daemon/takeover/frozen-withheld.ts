import { join } from 'node:path';
import { packageFiles, type Cycle } from '../../protocol/index.js';
import { cycleDir } from '../evacuation/package-writer.js';
import { readManifest } from './records.js';

/**
 * The paths the out leg's snapshot withheld because they hold a secret (docs/security.md#secrets).
 * The primary still has them, so its work tree equals the frozen checkpoint only with them left out.
 */
export async function frozenWithheld(root: string, cycle: Cycle): Promise<string[]> {
  const out = packageFiles('out', cycle.drain.revision);
  const { manifest } = await readManifest(join(cycleDir(root, cycle.id), out.manifest), cycle.drain.manifests.at(-1) ?? null);
  return (manifest.withheld ?? []).map((file) => file.path);
}
