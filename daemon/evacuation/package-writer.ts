import { createHash } from 'node:crypto';
import { lstat, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { HandoffError } from '../../protocol/index.js';
import { AlreadyExistsError, writeFileCreateOnce } from '../store/index.js';
import { NotRegularFileError, readRegularFile } from '../store/regular-file.js';
import { workspaceDir } from '../workspaces/workspace-dir.js';

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * Create-once: a package file is written once and never changed. A resumed drain that produces the
 * same bytes finds its own file; different bytes mean someone else wrote there — refuse.
 */
export async function createOnceOrSame(path: string, text: string): Promise<void> {
  try {
    await writeFileCreateOnce(path, text, 0o644);
  } catch (error) {
    if (!(error instanceof AlreadyExistsError)) throw error;
    // What is there is compared as it is: a link put in its place is not followed.
    const existing = await readRegularFile(path).then(
      (bytes) => bytes.toString('utf8'),
      (failure: unknown) => {
        if (failure instanceof NotRegularFileError)
          throw new HandoffError(
            'corrupt_record',
            `${path} already exists and is ${failure.what}`,
            'a package is written only as regular files; remove it (and look at where it points), then run `handoff resume`',
          );
        throw failure;
      },
    );
    if (existing !== text) {
      throw new HandoffError('corrupt_record', `${path} already exists with other content`, 'a package is never overwritten; inspect the file and the journal');
    }
  }
}

export const cycleDir = (root: string, cycle: string): string => join(workspaceDir(root), cycle);

/**
 * A package goes only into real directories of the repository: a symlink planted at
 * `.session-handoff/`, the cycle dir or `return/` would carry it elsewhere. Checked before the
 * directories are made (so nothing is created through a link) and after.
 */
export async function refuseLinkedDirs(root: string, dir: string): Promise<void> {
  const top = workspaceDir(root);
  for (let current = dir; current.startsWith(top); current = dirname(current)) {
    const stats = await lstat(current).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (stats?.isSymbolicLink() === true) {
      throw new HandoffError(
        'corrupt_record',
        `${current} is a symbolic link; a package is written only into a real directory of the repository`,
        'remove the link (and look at where it points), then run `handoff resume`',
      );
    }
    if (current === top) break;
  }
}

/** HANDOFF.md first, manifest last: a manifest on disk always has its HANDOFF.md beside it. */
export async function writePackage(
  root: string,
  cycle: string,
  files: { manifest: string; handoff: string },
  manifestText: string,
  handoffText: string,
): Promise<void> {
  const dir = cycleDir(root, cycle);
  const handoffPath = join(dir, files.handoff);
  await refuseLinkedDirs(root, dirname(handoffPath));
  await mkdir(dirname(handoffPath), { recursive: true });
  await refuseLinkedDirs(root, dirname(handoffPath));
  await createOnceOrSame(handoffPath, handoffText);
  await createOnceOrSame(join(dir, files.manifest), manifestText);
}
