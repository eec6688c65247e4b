import { dirname, join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { HandoffError, isCycleId } from '../../protocol/index.js';
import { createOnceOrSame } from '../evacuation/package-writer.js';
import { workspaceDir } from '../workspaces/workspace-dir.js';

/**
 * Writes the files of a travelling package (`<cycle>/...`) into this checkout's `.session-handoff/`,
 * create-once: a file already there must have the same bytes. Paths outside the cycle are refused.
 */
export async function materialize(root: string, cycle: string, files: Readonly<Record<string, string>>): Promise<void> {
  if (!isCycleId(cycle)) throw new HandoffError('invalid_body', `'${cycle}' is not a cycle id`, 'cycle ids look like 20261129T081500Z-k3f7qa');
  for (const path of Object.keys(files)) {
    const parts = path.split('/');
    if (parts[0] !== cycle || parts.some((p) => p === '..' || p === '' || p === '.')) {
      throw new HandoffError(
        'corrupt_record',
        `the package of cycle ${cycle} holds a path outside it: ${path}`,
        'inspect refs/handoff/packages on the remote; nothing was written',
      );
    }
  }
  for (const [path, text] of Object.entries(files)) {
    const target = join(workspaceDir(root), path);
    await mkdir(dirname(target), { recursive: true });
    await createOnceOrSame(target, text);
  }
}
