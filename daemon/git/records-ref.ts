import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { byCodeUnits } from '../../protocol/code-unit-order.js';
import { redactCredentials } from '../../protocol/index.js';
import { dataArg } from './data-arg.js';
import { readBlobBytes } from './object-batch.js';
import { lookAlikePush } from './look-alike.js';
import { git, runGit, type GitResult } from './run-git.js';
import { daemonCommitEnv } from './daemon-identity.js';

interface Dir {
  readonly blobs: Map<string, string>;
  readonly dirs: Map<string, Dir>;
}

interface TreeEntry {
  readonly name: string;
  readonly mode: '100644' | '40000';
  readonly type: 'blob' | 'tree';
  readonly id: string;
}

/** A record's path, one directory level per part; the parts a checkout would refuse are refused here. */
function partsOf(path: string): string[] {
  const parts = path.split('/');
  if (parts.some((part) => part === '' || part === '.' || part === '..' || part.toLowerCase() === '.git'))
    throw new Error(`not a record path: ${JSON.stringify(path)}`);
  return parts;
}

/** git's order of a tree's entries: by the bytes of the name, a subtree's as if it ended in '/'. */
const sortKey = (entry: TreeEntry) => Buffer.from(entry.type === 'tree' ? `${entry.name}/` : entry.name);

/**
 * The tree of `blobs` (path → blob id), every level written by one `git mktree --batch`. A parent
 * names its subtrees in the same input, so their ids are computed here, the way git hashes a tree;
 * git's answer for each tree must be that id.
 */
async function writeTree(root: string, blobs: readonly (readonly [string, string])[]): Promise<string> {
  // No files: the empty tree, from an empty stdin (closed at once), in the repository's own format.
  if (blobs.length === 0) return git(['mktree', '-z'], { cwd: root });
  const top: Dir = { blobs: new Map(), dirs: new Map() };
  for (const [path, blob] of blobs) {
    const parts = partsOf(path);
    let dir = top;
    for (const part of parts.slice(0, -1)) {
      if (dir.blobs.has(part)) throw new Error(`not a record path: ${JSON.stringify(path)} is under a file`);
      const next = dir.dirs.get(part) ?? { blobs: new Map(), dirs: new Map() };
      dir.dirs.set(part, next);
      dir = next;
    }
    const name = parts.at(-1) ?? '';
    if (dir.dirs.has(name)) throw new Error(`not a record path: ${JSON.stringify(path)} is a directory`);
    dir.blobs.set(name, blob);
  }
  // The repository's object format, from the length of the ids git gave the blobs.
  const algorithm = blobs[0]?.[1].length === 64 ? 'sha256' : 'sha1';
  const inputs: string[] = [];
  const ids: string[] = [];
  const visit = (dir: Dir): string => {
    const entries: TreeEntry[] = [
      ...[...dir.dirs].map(([name, sub]): TreeEntry => ({ name, mode: '40000', type: 'tree', id: visit(sub) })),
      ...[...dir.blobs].map(([name, id]): TreeEntry => ({ name, mode: '100644', type: 'blob', id })),
    ].sort((a, b) => Buffer.compare(sortKey(a), sortKey(b)));
    const body = Buffer.concat(entries.flatMap((entry) => [Buffer.from(`${entry.mode} ${entry.name}\0`), Buffer.from(entry.id, 'hex')]));
    const id = createHash(algorithm).update(`tree ${body.length}\0`).update(body).digest('hex');
    inputs.push(entries.map((entry) => `${entry.mode} ${entry.type} ${entry.id}\t${entry.name}\0`).join(''));
    ids.push(id);
    return id;
  };
  const tree = visit(top);
  // Subtrees first, each ended by an empty record.
  const written = (await git(['mktree', '-z', '--batch'], { cwd: root, input: inputs.join('\0') })).split('\n');
  if (written.length !== ids.length || written.some((id, index) => id !== ids[index]))
    throw new Error(`git mktree wrote ${written.join(' ')}, not the trees ${ids.join(' ')} of the record's files`);
  return tree;
}

/**
 * A commit holding exactly `files` (path → text), made from objects alone (blobs, trees, the commit):
 * records travel on their own refs and never touch the user's index, HEAD or branches.
 */
export async function commitFiles(
  root: string,
  files: Readonly<Record<string, string>>,
  parent: string | null,
  message: string,
  date: string,
): Promise<string> {
  const scratch = await mkdtemp(join(tmpdir(), 'handoff-records-'));
  try {
    const entries = Object.entries(files).sort(([a], [b]) => byCodeUnits(a, b));
    // One git for all the blobs and one for all the trees, whatever the number of files: each git
    // process costs the daemon a fork (docs/performance/evacuation.md). The scratch files are named by number.
    const sources = entries.map((_, index) => join(scratch, `blob-${index}`));
    await Promise.all(entries.map(([, content], index) => writeFile(sources[index] ?? '', content, { mode: 0o600 })));
    const blobs =
      entries.length === 0
        ? []
        : (await git(['hash-object', '-w', '--no-filters', '--stdin-paths'], { cwd: root, input: `${sources.join('\n')}\n` })).split('\n');
    if (blobs.length !== entries.length) throw new Error(`hash-object gave ${blobs.length} ids for ${entries.length} files`);
    const tree = await writeTree(
      root,
      entries.map(([path], index) => [path, blobs[index] ?? ''] as const),
    );
    return await git(['commit-tree', '--no-gpg-sign', ...(parent ? ['-p', parent] : []), '-m', message, '--end-of-options', tree], {
      cwd: root,
      env: daemonCommitEnv(date),
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** What a records commit may hold: checked before git lists or reads more than that. */
export interface RecordBounds {
  readonly maxEntries: number;
  readonly maxDepth: number;
  readonly maxFileBytes: number;
  readonly maxTotalBytes: number;
}

export type BoundedFiles = { readonly ok: true; readonly files: Record<string, string> } | { readonly ok: false; readonly why: string };

/** A tree entry's bytes at most: mode, a name up to 255 bytes, a SHA-256 id. */
const MAX_ENTRY_BYTES = 300;

/**
 * Every file of a records commit, path → text, within `bounds`, which hold before git is asked to
 * list anything: one level at a time (never `ls-tree -r`: a tree bomb, one subtree shared a million
 * times, lists without end from a few KB of objects), each tree's size checked first (its entries
 * cannot outnumber its bytes), entries counted across levels, blob sizes checked before a byte is read.
 */
export async function boundedFilesAt(root: string, commit: string, bounds: RecordBounds): Promise<BoundedFiles> {
  const maxTreeBytes = bounds.maxEntries * MAX_ENTRY_BYTES;
  let level: { readonly prefix: string; readonly id: string }[] = [{ prefix: '', id: `${dataArg(commit, 'records commit', 'corrupt_record')}^{tree}` }];
  const blobs: { readonly path: string; readonly id: string }[] = [];
  let entries = 0;
  let total = 0;
  for (let depth = 0; level.length > 0; depth += 1) {
    if (depth >= bounds.maxDepth) return { ok: false, why: `its tree is more than ${bounds.maxDepth} levels deep` };
    const checked = await runGit(['cat-file', '--batch-check'], { cwd: root, input: `${level.map((tree) => tree.id).join('\n')}\n` });
    if (checked.code !== 0) throw new Error(`git cat-file --batch-check exited ${checked.code}: ${checked.stderr.trim()}`);
    const sizes = checked.stdout.split('\n');
    const next: typeof level = [];
    for (const [index, tree] of level.entries()) {
      const [, type = '', size = ''] = (sizes[index] ?? '').split(' ');
      if (type !== 'tree') return { ok: false, why: `${tree.prefix || 'its root'} is not a tree (${type || 'missing'})` };
      if (Number(size) > maxTreeBytes) return { ok: false, why: `${tree.prefix || 'its root'} lists ${size} bytes of entries (at most ${maxTreeBytes})` };
      const listing = await git(['ls-tree', '-l', '-z', '--end-of-options', tree.id], { cwd: root });
      for (const line of listing.split('\0').filter(Boolean)) {
        const [meta = '', name = ''] = line.split('\t');
        const [, kind, id = '', bytes = ''] = meta.split(/\s+/);
        const path = `${tree.prefix}${name}`;
        entries += 1;
        if (entries > bounds.maxEntries) return { ok: false, why: `it holds more than ${bounds.maxEntries} files and directories` };
        if (kind === 'tree') {
          next.push({ prefix: `${path}/`, id });
          continue;
        }
        if (kind !== 'blob') return { ok: false, why: `${path} is a ${kind ?? 'thing'}, not a file` };
        total += Number(bytes);
        if (Number(bytes) > bounds.maxFileBytes || total > bounds.maxTotalBytes) return { ok: false, why: `${path} is too large (${bytes} bytes)` };
        blobs.push({ path, id });
      }
    }
    level = next;
  }
  const read = await readBlobBytes(
    root,
    blobs.map((blob) => blob.id),
    bounds.maxFileBytes,
  );
  const files: Record<string, string> = {};
  for (const blob of blobs) {
    const bytes = read.get(blob.id);
    if (bytes?.ok !== true) throw new Error(`cannot read ${blob.path} of ${commit}`);
    files[blob.path] = bytes.bytes.toString('utf8');
  }
  return { ok: true, files };
}

export type RefFetch = { readonly ok: true; readonly commit: string | null } | { readonly ok: false; readonly why: string };

/** Fetches one records ref into the same name locally (the daemon's own namespace); null when absent. */
export async function fetchRecordsRef(root: string, remote: string, ref: string, timeoutMs: number): Promise<RefFetch> {
  dataArg(remote, 'remote');
  dataArg(ref, 'records ref');
  const listed = await runGit(['ls-remote', '--refs', '--end-of-options', remote, ref], { cwd: root, timeoutMs });
  if (listed.code !== 0 || listed.timedOut) return { ok: false, why: failure(listed) };
  const sha =
    listed.stdout
      .split('\n')
      .find((line) => line.endsWith(`\t${ref}`))
      ?.split('\t')[0] ?? null;
  if (sha === null) return { ok: true, commit: null };
  // Requests racing in one checkout fetch the same ref at once; the loser of git's ref lock is not a
  // remote failure (test/fault/race.fault.ts), so it tries again.
  for (let attempt = 1; ; attempt += 1) {
    const fetched = await runGit(['fetch', '--no-tags', '--no-write-fetch-head', '--end-of-options', remote, `+${ref}:${ref}`], { cwd: root, timeoutMs });
    if (fetched.code === 0 && !fetched.timedOut) return { ok: true, commit: sha };
    if (attempt >= 5 || fetched.timedOut || !/cannot lock ref|unable to update local ref/.test(fetched.stderr)) return { ok: false, why: failure(fetched) };
    await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
  }
}

/**
 * Brings several records refs from the remote into the same names here in one fetch: a leg that
 * chains on records another checkout published (a return leg) needs their heads before it can make
 * the next ones. Every ref must exist on the remote.
 */
export async function fetchRecordsRefs(
  root: string,
  remote: string,
  refs: readonly string[],
  timeoutMs: number,
): Promise<{ readonly ok: true } | { readonly ok: false; readonly why: string }> {
  dataArg(remote, 'remote');
  const specs = refs.map((ref) => `+${dataArg(ref, 'records ref')}:${ref}`);
  const fetched = await runGit(['fetch', '--no-tags', '--no-write-fetch-head', '--end-of-options', remote, ...specs], { cwd: root, timeoutMs });
  return fetched.code === 0 && !fetched.timedOut ? { ok: true } : { ok: false, why: failure(fetched) };
}

/**
 * `rejected`: the remote holds something else (non-fast-forward: another machine moved first);
 * `refused`: the remote's own policy declined it (a pre-receive or update hook, a protected ref): its reason is `why`.
 */
export type RefPush = { readonly ok: true } | { readonly ok: false; readonly rejected: boolean; readonly refused: boolean; readonly why: string };

/** Pushes `commit` to `ref` as a fast-forward only: of two racing pushes the remote takes one. */
export async function pushRecordsRef(root: string, remote: string, commit: string, ref: string, timeoutMs: number): Promise<RefPush> {
  dataArg(remote, 'remote');
  dataArg(ref, 'records ref');
  const push = await runGit(['push', '--porcelain', '--no-verify', '--end-of-options', remote, `${commit}:${ref}`], { cwd: root, timeoutMs });
  const alike = await lookAlikePush(root, remote, push, [ref], timeoutMs);
  if (alike !== null) return { ok: false, rejected: false, refused: true, why: alike };
  if (push.code === 0 && !push.timedOut) {
    await runGit(['update-ref', '--end-of-options', ref, commit], { cwd: root });
    return { ok: true };
  }
  const text = `${push.stdout}\n${push.stderr}`;
  // A race lost on the remote's ref lock (another push moved it between our check and our update) is a
  // rejection too; any other `[remote rejected]` is the receiving side's hook or ref policy: its own words say why.
  const rejected = /\[rejected\]|non-fast-forward|fetch first|cannot lock ref|but expected/.test(text);
  const refused = !rejected && /\[remote rejected\]/.test(text);
  return { ok: false, rejected, refused, why: refused ? policyRefusal(push) : pushFailure(push) };
}

/** The remote's reason for a policy refusal: the porcelain reason and what its hook printed (`remote: ...` lines). */
function policyRefusal(result: GitResult): string {
  const said = result.stderr
    .split('\n')
    .filter((line) => line.startsWith('remote: '))
    .map((line) => line.slice('remote: '.length).trim())
    .filter(Boolean)
    .slice(0, 5);
  const why = pushFailure(result);
  return redactCredentials(said.length === 0 ? why : `${why}: ${said.join(' / ')}`);
}

/** Why a push failed: the refused ref's porcelain line (`!<TAB>src:dst<TAB>[rejected] (why)`), not git's closing 'Done'. */
function pushFailure(result: GitResult): string {
  const refused = result.stdout.split('\n').find((line) => line.startsWith('!'));
  const reason = refused?.split('\t').slice(2).join(' ').trim();
  return reason ? redactCredentials(reason) : failure(result);
}

function failure(result: GitResult): string {
  if (result.startError !== undefined) return redactCredentials(result.startError);
  if (result.timedOut) return 'the remote did not answer in time';
  const line =
    `${result.stderr}\n${result.stdout}`
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .slice(-1)[0] ?? `git exited ${result.code}`;
  return redactCredentials(line);
}
