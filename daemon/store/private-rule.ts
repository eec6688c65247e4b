/**
 * The one rule for what in the state dir may be trusted, shared by the daemon, the CLI and the agent
 * hooks. No imports, so a hook pays nothing for it: private-path.ts turns a problem into the refusal
 * with its fix, a hook into "daemon down".
 */

/** Bits that give the group or others any access; the state dir, token and socket must have none. */
export const SHARED_BITS = 0o077;

export type PrivateKind = 'directory' | 'file' | 'socket';

export type PrivateProblem = 'symlink' | 'kind' | 'owner' | 'mode';

/** What lstat (or an fstat of an O_NOFOLLOW handle) reports; both Stats and BigIntStats fit. */
export interface EntryStat {
  readonly uid: number | bigint;
  readonly mode: number | bigint;
  isSymbolicLink(): boolean;
  isDirectory(): boolean;
  isFile(): boolean;
  isSocket(): boolean;
}

/** The first reason another local user could read, replace or redirect the entry; null when it is private. */
export function privateProblem(stat: EntryStat, kind: PrivateKind, uid: number): PrivateProblem | null {
  if (stat.isSymbolicLink()) return 'symlink';
  const rightKind = kind === 'directory' ? stat.isDirectory() : kind === 'file' ? stat.isFile() : stat.isSocket();
  if (!rightKind) return 'kind';
  if (Number(stat.uid) !== uid) return 'owner';
  if ((Number(stat.mode) & SHARED_BITS) !== 0) return 'mode';
  return null;
}
