import { join, relative, sep } from 'node:path';
import { HandoffError } from '../../protocol/errors.js';

/** What is at a path itself (lstat: a link is a link, not what it points at). */
export type PathKind = 'missing' | 'file' | 'directory' | 'symlink' | 'other';

export interface PathFacts {
  readonly kind: PathKind;
  /** The owner may write it (mode bits: root ignores them, the installer does not). */
  readonly writable: boolean;
}

/** One file an install writes, with the backup of its previous version. */
export interface PlannedWrite {
  readonly path: string;
  /** null: the file is removed. */
  readonly text: string | null;
  readonly before: string | null;
  readonly backup: { readonly path: string; readonly text: string } | null;
}

/** The file system as the installer sees it; the CLI supplies it. */
export interface InstallIo {
  /** The file's text, or null when there is none. */
  read(path: string): Promise<string | null>;
  inspect(path: string): Promise<PathFacts>;
  /** Every link resolved; null when the chain ends nowhere. */
  realpath(path: string): Promise<string | null>;
  /** The nearest directory above `path`, by name and without following links, that holds `.git`. */
  repositoryOf(path: string): Promise<string | null>;
  /** Writes every file and backup, or none: staged first, then put in place; a failure restores what was there. */
  commit(writes: readonly PlannedWrite[]): Promise<void>;
}

function refused(message: string, hint: string): HandoffError {
  return new HandoffError('install_refused', message, `${hint}; nothing was changed`);
}

const readOnly = (path: string) =>
  refused(`${path} is read-only`, 'make it writable (chmod u+w) if session-handoff may change it, or leave it: the installer respects a read-only file');

/**
 * Where an install may write `path`, checked before anything is read. Inside a repository no
 * symbolic link is followed, at any level below the repository root: a committed link could point
 * at a key (and the installer would copy it into the repository and a backup) or out of the
 * repository. A user config that is a link (dotfiles) is edited at its target, in place, and the
 * link kept; the note says so. A read-only file is refused, never replaced.
 */
export async function safeTarget(path: string, io: InstallIo, notes: string[]): Promise<string> {
  const repository = await io.repositoryOf(path);
  if (repository !== null) {
    let at = repository;
    const parts = relative(repository, path).split(sep);
    for (const [index, part] of parts.entries()) {
      at = join(at, part);
      const facts = await io.inspect(at);
      const last = index === parts.length - 1;
      if (facts.kind === 'symlink') {
        throw refused(
          `${at} is a symbolic link inside the repository ${repository}; handoff install never writes through a link in a repository`,
          `replace the link with a regular ${last ? 'file' : 'directory'} (or remove it) and install again`,
        );
      }
      // Below a missing directory everything is created by the install, as plain directories.
      if (facts.kind === 'missing') return path;
      if (!last && facts.kind !== 'directory') throw refused(`${at} is not a directory`, 'move it out of the way and install again');
      if (last && facts.kind !== 'file') throw refused(`${path} is not a regular file`, 'move it out of the way and install again');
      if (last && !facts.writable) throw readOnly(path);
    }
    return path;
  }
  const facts = await io.inspect(path);
  if (facts.kind === 'missing') return path;
  if (facts.kind === 'symlink') {
    const real = await io.realpath(path);
    if (real === null) throw refused(`${path} is a symbolic link to a file that does not exist`, 'create the file it points at, or remove the link');
    const target = await io.inspect(real);
    if (target.kind !== 'file') throw refused(`${path} links to ${real}, which is not a regular file`, 'point the link at a file, or remove it');
    if (!target.writable) throw readOnly(`${real} (the target of ${path})`);
    notes.push(`${path} is a symbolic link: the install edits its target ${real} in place and keeps the link`);
    return real;
  }
  if (facts.kind !== 'file') throw refused(`${path} is not a regular file`, 'move it out of the way and install again');
  if (!facts.writable) throw readOnly(path);
  return path;
}
