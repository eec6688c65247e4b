import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { dirname, relative, sep } from 'node:path';

/**
 * A file of a package or a capsule is read as what it is: a regular file, reached without following
 * a symbolic link. A link planted at `HANDOFF.md`, `manifest.json`, `capsule.json` or at a directory
 * on the way must not make the daemon read — and show, hash or serve — another file.
 */
export class NotRegularFileError extends Error {
  readonly code = 'ENOTREG';
  constructor(
    readonly path: string,
    readonly what: string,
  ) {
    super(`${path} is ${what}; only a regular file is read`);
    this.name = 'NotRegularFileError';
  }
}

/** Each directory from below `within` down to the file's parent, checked with lstat: no links on the way. */
async function refuseLinkedParents(path: string, within: string): Promise<void> {
  const below = relative(within, dirname(path));
  if (below === '' || below.startsWith('..')) return;
  let current = within;
  for (const part of below.split(sep)) {
    current = `${current}${sep}${part}`;
    if ((await lstat(current)).isSymbolicLink()) throw new NotRegularFileError(current, 'a symbolic link');
  }
}

export interface ReadRegularOptions {
  /** A directory the path is under: the directories between it and the file must not be links either. */
  readonly within?: string;
}

/**
 * The bytes of a regular file, opened with O_NOFOLLOW (a link at the last component fails with
 * ELOOP instead of being followed) and O_NONBLOCK (a planted FIFO cannot hang the read), then
 * checked with fstat on the open handle. A missing file throws ENOENT as readFile does.
 */
export async function readRegularFile(path: string, options: ReadRegularOptions = {}): Promise<Buffer> {
  if (options.within !== undefined) await refuseLinkedParents(path, options.within);
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new NotRegularFileError(path, 'a symbolic link');
    throw error;
  }
  try {
    if (!(await handle.stat()).isFile()) throw new NotRegularFileError(path, 'not a regular file');
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}
