import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { join } from 'node:path';
import { ALLOW_SECRETS_FILE, HandoffError } from '../../protocol/index.js';
import type { AllowListSource } from '../../schemas/index.js';
import { cameThroughGit } from '../git/index.js';

const MAX_BYTES = 65_536;

export interface AllowList {
  readonly paths: ReadonlySet<string>;
  readonly source: AllowListSource;
}

/**
 * The allow list (protocol/withheld.ts): one literal path per line, `#` starts a comment line. The
 * daemon reads it and never writes it, and only when it is the user's alone: untracked and in no
 * commit. A list the remote could have written is ignored (`source: 'ignored'`, said in HANDOFF.md
 * and status), so a committed list cannot make the daemon push the user's own secrets.
 */
export async function readAllowList(root: string): Promise<AllowList> {
  // Judged before the file is opened: a committed link or FIFO there is ignored too, not a blocked drain.
  const present = await lstat(join(root, ALLOW_SECRETS_FILE)).then(
    () => true,
    (error: NodeJS.ErrnoException) => error.code !== 'ENOENT' && error.code !== 'ENOTDIR',
  );
  if (!present) return { paths: new Set(), source: 'absent' };
  if (await cameThroughGit(root, ALLOW_SECRETS_FILE)) return { paths: new Set(), source: 'ignored' };
  const paths = await readListFile(root);
  return paths === null ? { paths: new Set(), source: 'absent' } : { paths, source: 'read' };
}

/** The list's lines, or null when there is no list. */
async function readListFile(root: string): Promise<ReadonlySet<string> | null> {
  let handle;
  try {
    // A link here could make another file decide what is pushed: it is refused, not followed; a FIFO cannot block the open.
    handle = await open(join(root, ALLOW_SECRETS_FILE), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    // No list (and no directory for one: the package step names a `.session-handoff` that is a file).
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw new HandoffError(
      'drain_blocked',
      `${ALLOW_SECRETS_FILE} cannot be read (${code ?? 'error'}): it must be a regular file, not a link; fix or remove it, then run \`handoff resume\``,
      `fix or remove ${ALLOW_SECRETS_FILE}, then run \`handoff resume\``,
    );
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size > MAX_BYTES) {
      throw new HandoffError(
        'drain_blocked',
        `${ALLOW_SECRETS_FILE} must be a regular file under ${MAX_BYTES} bytes; fix or remove it, then run \`handoff resume\``,
        `fix or remove ${ALLOW_SECRETS_FILE}, then run \`handoff resume\``,
      );
    }
    const text = await handle.readFile('utf8');
    return new Set(
      text
        .split('\n')
        .map((line) => line.replace(/\r$/, ''))
        .filter((line) => line.trim() !== '' && !line.startsWith('#')),
    );
  } finally {
    await handle.close();
  }
}
