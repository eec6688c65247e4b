import { lstat, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { HandoffError, isCycleId } from '../../protocol/index.js';
import { createOnceOrSame } from '../evacuation/package-writer.js';
import { WORKSPACE_DIR } from '../workspaces/workspace-dir.js';
import type { AcceptCheck } from './judgement.js';

/** A link where the daemon writes a record of this checkout: named, and nothing is written through it. */
function linked(path: string): HandoffError {
  return new HandoffError(
    'linked_path',
    `${path} is a symbolic link; the daemon writes its records only into real directories of this checkout`,
    'a clone can carry such a link from its remote: remove it (look at where it points first), then run the command again; nothing was written',
  );
}

function misplaced(path: string, what: string): HandoffError {
  return new HandoffError('linked_path', `${path} is not ${what}`, 'move it away, then run the command again; nothing was written');
}

async function kindOf(path: string): Promise<'missing' | 'dir' | 'file' | 'link' | 'other'> {
  const stats = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (stats === null) return 'missing';
  if (stats.isSymbolicLink()) return 'link';
  return stats.isDirectory() ? 'dir' : stats.isFile() ? 'file' : 'other';
}

/**
 * Walks `parts` below the checkout one component at a time with lstat, never following a link:
 * a linked or non-directory component is refused; a missing one is made only when `create` says so
 * (and looked at again, so what was made is what is used). Node has no openat(2): between the look and
 * the write another local process of this user could swap a component, which no remote can do.
 */
async function realDirs(root: string, parts: readonly string[], create: boolean): Promise<void> {
  let current = root;
  for (const part of parts) {
    current = join(current, part);
    let kind = await kindOf(current);
    if (kind === 'missing') {
      if (!create) return;
      await mkdir(current, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
      });
      kind = await kindOf(current);
    }
    if (kind === 'link') throw linked(current);
    if (kind !== 'dir') throw misplaced(current, 'a directory');
  }
}

/** `<checkout>/.session-handoff/`, made if missing: a link or a file there is refused (linked_path). */
export async function realWorkspaceDir(root: string): Promise<string> {
  await realDirs(root, [WORKSPACE_DIR], true);
  return join(root, WORKSPACE_DIR);
}

/**
 * An accept's check that its writes can land (materialize's own look, run before anything is written):
 * `.session-handoff/` and the package's paths are real directories and files, or not there yet.
 */
export const writableCheck: AcceptCheck = async ({ source }, _body, receiverRoot) => {
  await realDirs(receiverRoot, [WORKSPACE_DIR], false);
  if (source.package !== null) await packageTargets(receiverRoot, source.cycle.id, source.package);
  return null;
};

/** Every path of a package in this checkout, each checked without following a link and without writing. */
async function packageTargets(root: string, cycle: string, files: Readonly<Record<string, string>>) {
  if (!isCycleId(cycle)) throw new HandoffError('invalid_body', `'${cycle}' is not a cycle id`, 'cycle ids look like 20261129T081500Z-k3f7qa');
  const targets = Object.keys(files).map((path) => {
    const parts = path.split('/');
    if (parts[0] !== cycle || parts.length < 2 || parts.some((p) => p === '..' || p === '' || p === '.')) {
      throw new HandoffError(
        'corrupt_record',
        `the package of cycle ${cycle} holds a path outside it: ${path}`,
        'inspect refs/handoff/packages on the remote; nothing was written',
      );
    }
    return { path, dirs: [WORKSPACE_DIR, ...parts.slice(0, -1)], file: join(root, WORKSPACE_DIR, path) };
  });
  for (const target of targets) {
    await realDirs(root, target.dirs, false);
    const kind = await kindOf(target.file);
    if (kind === 'link') throw linked(target.file);
    if (kind !== 'missing' && kind !== 'file') throw misplaced(target.file, 'a regular file');
  }
  return targets;
}

/**
 * Writes the files of a travelling package (`<cycle>/...`, already proven) into this checkout's
 * `.session-handoff/`, create-once: a file already there must have the same bytes. Every path is
 * checked first, without following a link and without writing; only then is anything written, so a
 * linked `.session-handoff/`, `<cycle>/` or file refuses the whole package.
 */
export async function materialize(root: string, cycle: string, files: Readonly<Record<string, string>>): Promise<void> {
  const targets = await packageTargets(root, cycle, files);
  for (const target of targets) {
    await realDirs(root, target.dirs, true);
    if ((await kindOf(target.file)) === 'link') throw linked(target.file);
    await createOnceOrSame(target.file, files[target.path] ?? '');
  }
}
