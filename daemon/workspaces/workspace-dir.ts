import { mkdir, readFile, appendFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { gitPath, WORKSPACE_DIR } from '../git/index.js';

export { WORKSPACE_DIR };
export const PAUSE_FILE = 'PAUSE';
const EXCLUDE_LINE = `/${WORKSPACE_DIR}/`;

export const workspaceDir = (root: string): string => join(root, WORKSPACE_DIR);
export const workspacePauseFile = (root: string): string => join(root, WORKSPACE_DIR, PAUSE_FILE);

/**
 * Creates `<repo>/.session-handoff/` and lists it in `.git/info/exclude` (never in a tracked
 * .gitignore), so the daemon's files never show up as the user's changes.
 */
export async function ensureWorkspaceDir(root: string): Promise<void> {
  await mkdir(workspaceDir(root), { recursive: true, mode: 0o700 });
  const exclude = await gitPath(root, 'info/exclude');
  let current = '';
  try {
    current = await readFile(exclude, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await mkdir(dirname(exclude), { recursive: true });
  }
  if (current.split(/\r?\n/).some((line) => line.trim() === EXCLUDE_LINE)) return;
  const separator = current === '' || current.endsWith('\n') ? '' : '\n';
  await appendFile(exclude, `${separator}# session-handoff: the daemon's per-repository files\n${EXCLUDE_LINE}\n`);
}
