import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, lstat } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { displayRemote, isLocalRemote } from '../../protocol/index.js';
import type { RepositoryObservation } from '../../schemas/index.js';
import { OWN_FILES_EXCLUDE } from './own-files.js';
import { git, runGit } from './run-git.js';

/** Files whose content steers an agent: a receiver must know when they changed under it. */
const INSTRUCTION_FILES = ['AGENTS.md', 'CLAUDE.md', 'CLAUDE.local.md', 'GEMINI.md', '.cursorrules', '.github/copilot-instructions.md'];
const INSTRUCTION_DIRS = ['.clinerules', '.cursor/rules'];

async function optional(args: readonly string[], cwd: string): Promise<string | null> {
  const result = await runGit(args, { cwd, timeoutMs: 15_000 });
  return result.code === 0 ? result.stdout.trim() : null;
}

/** The remote a handoff branch goes to: the upstream's, else `origin`, else the only one. */
export async function chooseRemote(root: string): Promise<string | null> {
  return pickRemote(await remoteNames(root), await optional(['rev-parse', '--abbrev-ref', '--symbolic-full-name', '@{u}'], root));
}

const remoteNames = async (root: string): Promise<string[]> => (await optional(['remote'], root))?.split('\n').filter(Boolean) ?? [];

/** chooseRemote's rule, given the remotes and the upstream (`origin/main`, or null for none). */
function pickRemote(remotes: string[], upstreamRemote: string | null): string | null {
  const fromUpstream = upstreamRemote?.split('/')[0];
  if (fromUpstream && remotes.includes(fromUpstream)) return fromUpstream;
  if (remotes.includes('origin')) return 'origin';
  return remotes.length === 1 ? (remotes[0] ?? null) : (remotes.sort()[0] ?? null);
}

async function operationInProgress(gitDir: string): Promise<RepositoryObservation['operation_in_progress']> {
  if (existsSync(join(gitDir, 'rebase-merge')) || existsSync(join(gitDir, 'rebase-apply'))) return 'rebase';
  if (existsSync(join(gitDir, 'MERGE_HEAD'))) return 'merge';
  if (existsSync(join(gitDir, 'CHERRY_PICK_HEAD'))) return 'cherry-pick';
  if (existsSync(join(gitDir, 'BISECT_LOG'))) return 'bisect';
  return null;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

export async function instructionFiles(root: string): Promise<RepositoryObservation['instructions']> {
  const found: RepositoryObservation['instructions'] = [];
  const add = async (path: string) => {
    const stat = await lstat(join(root, path)).catch(() => null);
    if (stat?.isFile()) found.push({ path, sha256: sha256(await readFile(join(root, path))) });
  };
  for (const path of INSTRUCTION_FILES) await add(path);
  for (const dir of INSTRUCTION_DIRS) {
    const stat = await lstat(join(root, dir)).catch(() => null);
    if (stat?.isFile()) await add(dir);
    if (stat?.isDirectory()) {
      for (const entry of (await readdir(join(root, dir), { recursive: true })).sort()) await add(join(dir, String(entry)));
    }
  }
  return found;
}

/**
 * `git config -z --get-regexp` of the `remote.<name>.url` keys (`key\nvalue\0` each): name → URL. A
 * remote with several URLs gets its last, as `git config --get` answers.
 */
export function configuredUrls(output: string | null): Map<string, string> {
  const urls = new Map<string, string>();
  for (const record of (output ?? '').split('\0')) {
    const newline = record.indexOf('\n');
    const key = newline === -1 ? record : record.slice(0, newline);
    if (key.startsWith('remote.') && key.endsWith('.url') && key.length > 'remote..url'.length && newline !== -1)
      urls.set(key.slice('remote.'.length, -'.url'.length), record.slice(newline + 1));
  }
  return urls;
}

/** `git status --porcelain=v2 -z`: staged, unstaged and untracked paths (ignored excluded). */
export function parseStatus(output: string): RepositoryObservation['dirty'] {
  const dirty = { staged: [] as string[], unstaged: [] as string[], untracked: [] as string[] };
  const records = output.split('\0');
  for (let i = 0; i < records.length; i++) {
    const record = records[i] ?? '';
    if (record.startsWith('? ')) dirty.untracked.push(record.slice(2));
    else if (record.startsWith('1 ') || record.startsWith('2 ') || record.startsWith('u ')) {
      const fields = record.split(' ');
      const xy = fields[1] ?? '..';
      const path = fields.slice(record.startsWith('1 ') ? 8 : record.startsWith('2 ') ? 9 : 10).join(' ');
      if (record.startsWith('2 ')) i++; // a rename carries its original path as the next record
      if (xy[0] !== '.') dirty.staged.push(path);
      if (xy[1] !== '.') dirty.unstaged.push(path);
    }
  }
  return dirty;
}

interface BranchHeaders {
  readonly head: string | null;
  /** The branch HEAD names, null when detached; `(detached)` may also be a branch's own name. */
  readonly branch: string | null;
  readonly detachedWord: boolean;
  /** Only an upstream that resolves to a commit (the `branch.ab` line comes with it). */
  readonly upstream: string | null;
  readonly ahead: number | null;
  readonly behind: number | null;
}

/** The `# branch.*` headers of `git status --porcelain=v2 --branch -z`. */
export function parseBranchHeaders(output: string): BranchHeaders {
  const headers = new Map<string, string>();
  for (const record of output.split('\0')) {
    if (!record.startsWith('# branch.')) continue;
    const space = record.indexOf(' ', 2);
    if (space !== -1) headers.set(record.slice(2, space), record.slice(space + 1));
  }
  const oid = headers.get('branch.oid');
  const name = headers.get('branch.head');
  const ab = /^\+(\d+) -(\d+)$/.exec(headers.get('branch.ab') ?? '');
  return {
    head: oid === undefined || oid === '(initial)' ? null : oid,
    branch: name === undefined || name === '(detached)' ? null : name,
    detachedWord: name === '(detached)',
    upstream: ab === null ? null : (headers.get('branch.upstream') ?? null),
    ahead: ab === null ? null : Number(ab[1]),
    behind: ab === null ? null : Number(ab[2]),
  };
}

/**
 * A relative local remote (`git remote add origin ../remote.git`) made absolute: git reads it from
 * the work tree's root, but the pickup's `git clone` runs in another directory, where it would fail.
 */
const absoluteIfLocal = (url: string, root: string): string => (isLocalRemote(url) && !isAbsolute(url) ? resolve(root, url) : url);

/** Everything the manifest says about the repository, observed, never assumed. Reads only. */
export async function inspectRepository(root: string): Promise<RepositoryObservation> {
  // Reads only, so they run at once: the small ones finish while status walks the work tree. One
  // status says what five calls did (HEAD, its branch, the upstream, ahead and behind) with the
  // changed paths: every git process costs the daemon a fork (docs/performance/evacuation.md).
  const [gitDir, status, remotes, rootList, urls, instructions] = await Promise.all([
    git(['rev-parse', '--absolute-git-dir'], { cwd: root }),
    git(['status', '--porcelain=v2', '--branch', '-z', '--untracked-files=all', '--ignore-submodules=none', '--', '.', OWN_FILES_EXCLUDE], {
      cwd: root,
      timeoutMs: 120_000,
    }),
    remoteNames(root),
    // Fails, so null, on an unborn HEAD.
    optional(['rev-list', '--max-parents=0', 'HEAD'], root),
    // Every remote's URL now, though the one wanted is known only after status: no second round of git.
    optional(['config', '-z', '--get-regexp', String.raw`^remote\..*\.url$`], root),
    instructionFiles(root),
  ]);
  const headers = parseBranchHeaders(status);
  const { head } = headers;
  const upstream = head === null ? null : headers.upstream;
  const remote = pickRemote(remotes, headers.upstream);
  const roots = head === null ? null : rootList;
  // The URL as configured (before insteadOf rewriting): what a receiver elsewhere can use.
  const remoteUrl = remote === null ? null : (configuredUrls(urls).get(remote) ?? null);
  // status prints `(detached)` for a detached HEAD and for a branch of that name alike.
  const branch = headers.detachedWord ? await optional(['symbolic-ref', '--short', '-q', 'HEAD'], root) : headers.branch;
  return {
    remote,
    remote_url: remoteUrl === null ? null : displayRemote(absoluteIfLocal(remoteUrl, root)),
    // Several roots happen (merged histories): the smallest sha is a choice every clone agrees on.
    root_commit: roots === null ? null : (roots.split('\n').filter(Boolean).sort()[0] ?? null),
    branch,
    head,
    upstream,
    ahead: upstream === null ? null : headers.ahead,
    behind: upstream === null ? null : headers.behind,
    dirty: parseStatus(status),
    operation_in_progress: await operationInProgress(gitDir),
    instructions,
  };
}
