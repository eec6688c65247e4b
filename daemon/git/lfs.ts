import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { displayRemote, HandoffError, redactCredentials } from '../../protocol/index.js';
import { dataArg } from './data-arg.js';
import { daemonCommitEnv } from './daemon-identity.js';
import { gitPath } from './repo-root.js';
import { git, LFS_HINT, runGit, type GitResult } from './run-git.js';

/** git-lfs reads a blob as a possible pointer only below this size. */
const POINTER_MAX_BYTES = 1024;
const POINTER = /^version https:\/\/git-lfs\.github\.com\/spec\/v1\n(?:ext-\d+-\w+ sha256:[0-9a-f]{64}\n)*oid sha256:([0-9a-f]{64})\nsize (\d+)\n$/;
/** oids per `git lfs push`, so a large snapshot never meets the argv limit. */
const BATCH = 100;

export interface LfsPointer {
  readonly blob: string;
  readonly oid: string;
  readonly text: string;
}

interface Entry {
  readonly blob: string;
  /** Null when listed without sizes. */
  readonly size: number | null;
  readonly path: string;
}

/**
 * The blobs of a commit's tree. Sizes only when asked: `-l` reads every blob's header, 0.4 s for
 * 20,000 loose blobs against 0.02 s without it (docs/performance/evacuation.md).
 */
async function entries(root: string, commit: string, sizes: boolean): Promise<Entry[]> {
  const listing = await git(['ls-tree', '-r', '-z', ...(sizes ? ['-l'] : []), '--end-of-options', dataArg(commit, 'commit')], {
    cwd: root,
    timeoutMs: 120_000,
  });
  const found: Entry[] = [];
  for (const record of listing.split('\0').filter(Boolean)) {
    const match = /^\d+ blob ([0-9a-f]+)(?: +(\d+))?\t(.*)$/s.exec(record);
    if (match?.[1] !== undefined && match[3] !== undefined)
      found.push({ blob: match[1], size: match[2] === undefined ? null : Number(match[2]), path: match[3] });
  }
  return found;
}

/** Blob contents by id, read in one `cat-file --batch`. */
async function blobs(root: string, ids: readonly string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  const out = new Map<string, string>();
  if (unique.length === 0) return out;
  const result = await runGit(['cat-file', '--batch'], { cwd: root, input: `${unique.join('\n')}\n`, timeoutMs: 120_000, stdoutEncoding: 'latin1' });
  if (result.code !== 0) throw new Error(`cat-file --batch failed: ${result.stderr.trim()}`);
  const bytes = Buffer.from(result.stdout, 'latin1');
  let at = 0;
  while (at < bytes.length) {
    const newline = bytes.indexOf(0x0a, at);
    const [id, , size] = bytes.subarray(at, newline).toString('latin1').split(' ');
    const length = Number(size);
    if (newline < 0 || !Number.isInteger(length)) break;
    out.set(id ?? '', bytes.subarray(newline + 1, newline + 1 + length).toString('latin1'));
    at = newline + 1 + length + 1;
  }
  return out;
}

/**
 * The Git LFS pointers a commit holds. Only a tree whose `.gitattributes` mention `filter=lfs` is
 * read blob by blob; a blob counts when its content is a pointer (git-lfs's own rule).
 */
export async function lfsPointers(root: string, commit: string): Promise<LfsPointer[]> {
  const attributes = (await entries(root, commit, false)).filter((entry) => entry.path === '.gitattributes' || entry.path.endsWith('/.gitattributes'));
  const attributeText = await blobs(
    root,
    attributes.map((entry) => entry.blob),
  );
  if (![...attributeText.values()].some((text) => /filter=lfs/.test(text))) return [];
  const small = (await entries(root, commit, true)).filter((entry) => entry.size !== null && entry.size < POINTER_MAX_BYTES);
  const contents = await blobs(
    root,
    small.map((entry) => entry.blob),
  );
  const pointers = new Map<string, LfsPointer>();
  for (const [blob, text] of contents) {
    const oid = POINTER.exec(text)?.[1];
    if (oid !== undefined) pointers.set(blob, { blob, oid, text });
  }
  return [...pointers.values()];
}

/** git-lfs takes a URL: a local path becomes a file:// URL (git-lfs ≥ 3 transfers those itself). */
export function lfsUrl(root: string, remoteUrl: string): string {
  const scpLike = /^[^/:]+:/.test(remoteUrl) && !/^[a-z][a-z0-9+.-]*:\/\//i.test(remoteUrl);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(remoteUrl) || scpLike) return remoteUrl;
  return pathToFileURL(isAbsolute(remoteUrl) ? remoteUrl : resolve(root, remoteUrl)).href;
}

/**
 * The LFS API endpoint git-lfs itself derives from a clone URL: an http(s) one gains `.git/info/lfs`
 * (or `/info/lfs` after `.git`). An ssh, scp-like or file URL is given as it is: git-lfs then asks that
 * same remote (`git-lfs-authenticate`, or the local repository), as it does from the clone URL.
 */
export function lfsEndpoint(cloneUrl: string): string {
  if (!/^https?:\/\//i.test(cloneUrl)) return cloneUrl;
  const bare = cloneUrl.replace(/\/+$/, '');
  return bare.endsWith('.git') ? `${bare}/info/lfs` : `${bare}.git/info/lfs`;
}

/**
 * git-lfs takes its endpoint from `lfs.pushurl`, `lfs.url` or `remote.*.lfsurl` before the URL on its
 * command line, and reads them from a tracked `.lfsconfig` too — a file anyone who can push to the
 * repository (or wrote a checkpoint) controls. Git's own config outranks `.lfsconfig`, so both keys are
 * pinned to the endpoint of the URL the daemon derived from the remote the user configured: objects and
 * credentials go nowhere else. (`lfs.<url>.access` from `.lfsconfig` only changes how that endpoint is asked.)
 */
export const pinnedEndpoint = (cloneUrl: string): string[] => {
  const endpoint = lfsEndpoint(cloneUrl);
  return ['-c', `lfs.url=${endpoint}`, '-c', `lfs.pushurl=${endpoint}`];
};

/**
 * The pins for a git command that may run the LFS smudge filter in a receiver's checkout (a switch to a
 * checkpoint whose `.lfsconfig` is the remote's words): the endpoint of `remote` when this checkout has
 * it, else of the remote git-lfs would pick (the only one, or origin), else this repository itself, so
 * that nothing is asked of a server a file in the tree named.
 */
export async function smudgePins(root: string, remote: string | null): Promise<string[]> {
  const names = (await runGit(['remote'], { cwd: root })).stdout.split('\n').filter(Boolean);
  // A name this checkout does not have (the source's remote, for a receiver on the same machine) falls through to git-lfs's own pick.
  const name = [remote, names.length === 1 ? names[0] : null, 'origin'].find((n): n is string => typeof n === 'string' && names.includes(n));
  const url = name === undefined ? null : await runGit(['remote', 'get-url', '--end-of-options', dataArg(name, 'remote')], { cwd: root });
  const cloneUrl = url !== null && url.code === 0 && url.stdout.trim() !== '' ? url.stdout.trim() : await gitPath(root, '.');
  return pinnedEndpoint(dataArg(lfsUrl(root, cloneUrl), 'remote URL'));
}

function lfsBlocked(what: string, result: GitResult | null, url: string): HandoffError {
  const detail =
    result === null
      ? ''
      : `: ${redactCredentials(result.startError ?? (result.timedOut ? 'timed out' : `${result.stderr}\n${result.stdout}`.trim().split('\n').slice(-2).join(' / ')))}`;
  return new HandoffError(
    'drain_blocked',
    `Git LFS upload to '${displayRemote(url)}' ${what}${detail.slice(0, 400)}`,
    'the checkpoint is not recoverable without that content; fix it, then run `handoff resume`',
  );
}

async function localObjects(root: string): Promise<string> {
  const configured = await runGit(['config', '--get', 'lfs.storage'], { cwd: root });
  if (configured.code === 0 && configured.stdout.trim() !== '') {
    const storage = configured.stdout.trim();
    return join(isAbsolute(storage) ? storage : join(await gitPath(root, '.'), storage), 'objects');
  }
  return gitPath(root, 'lfs/objects');
}

const objectPath = (dir: string, oid: string) => join(dir, oid.slice(0, 2), oid.slice(2, 4), oid);
const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/**
 * Fetches the pointers' objects from `url` into a scratch repository of the daemon's (never the
 * user's store, which already has them): the remote has exactly the objects that arrive.
 */
async function missingOnRemote(pointers: readonly LfsPointer[], url: string, timeoutMs: number): Promise<string[]> {
  return scratchFetch(pointers, url, timeoutMs, async (fetched, objects) => {
    if (fetched.timedOut || fetched.startError !== undefined) throw lfsBlocked('could not be verified', fetched, url);
    const missing: string[] = [];
    for (const pointer of pointers) if (!(await exists(objectPath(objects, pointer.oid)))) missing.push(pointer.oid);
    return missing;
  });
}

/** How the LFS endpoint answered a download request (daemon/rehearsal/way-out-probe.ts). */
export type LfsProbe =
  | { readonly ok: true; readonly endpoint: string }
  | {
      readonly ok: false;
      readonly endpoint: string;
      readonly kind: 'timed_out' | 'credentials' | 'rejected' | 'unreachable' | 'failed';
      readonly words: string;
    };

/**
 * PREPARE's proof that the LFS endpoint the drain would upload to answers, from the daemon's own
 * environment: a download of one pointer's object into a scratch repository (the drain's own
 * read-back), so nothing is uploaded. A server that answers "that object does not exist" answered.
 */
export async function probeLfsEndpoint(pointer: LfsPointer, remoteUrl: string, root: string, timeoutMs: number): Promise<LfsProbe> {
  const url = dataArg(lfsUrl(root, remoteUrl), 'remote URL');
  const endpoint = displayRemote(lfsEndpoint(url));
  return scratchFetch<LfsProbe>([pointer], url, timeoutMs, (fetched) => {
    const words = redactCredentials(fetched.startError ?? `${fetched.stderr}\n${fetched.stdout}`.trim().split('\n').slice(-3).join(' / ')).slice(0, 400);
    if (fetched.timedOut) return Promise.resolve({ ok: false, endpoint, kind: 'timed_out', words } as const);
    if (fetched.code === 0 && fetched.startError === undefined) return Promise.resolve({ ok: true, endpoint } as const);
    const text = `${fetched.stderr}\n${fetched.stdout}`;
    if (/Object does not exist on the server|object not found on the server|remote missing object/i.test(text))
      return Promise.resolve({ ok: true, endpoint } as const);
    const kind = /credentials|authenticat|\b401\b|\b403\b|unauthorized|forbidden/i.test(text)
      ? 'credentials'
      : /connection refused|could not resolve|no such host|dial tcp|network is unreachable/i.test(text)
        ? 'unreachable'
        : /not found|\b404\b|\b501\b|not implemented/i.test(text)
          ? 'rejected'
          : 'failed';
    return Promise.resolve({ ok: false, endpoint, kind, words } as const);
  });
}

/** Fetches the pointers' objects from `url` into a scratch repository of the daemon's, and looks at what came. */
async function scratchFetch<T>(
  pointers: readonly LfsPointer[],
  url: string,
  timeoutMs: number,
  look: (fetched: GitResult, objects: string) => Promise<T>,
): Promise<T> {
  const scratch = await mkdtemp(join(tmpdir(), 'handoff-lfs-'));
  try {
    await git(['init', '-q', '--end-of-options', scratch], { cwd: tmpdir() });
    const lines: string[] = [];
    for (const [i, pointer] of pointers.entries()) {
      const blob = await git(['hash-object', '-w', '--stdin'], { cwd: scratch, input: pointer.text });
      lines.push(`100644 blob ${blob}\t${i}`);
    }
    const tree = await git(['mktree'], { cwd: scratch, input: `${lines.join('\n')}\n` });
    const commit = await git(['commit-tree', '--no-gpg-sign', '-m', 'lfs check', '--end-of-options', tree], {
      cwd: scratch,
      env: daemonCommitEnv(),
    });
    const fetched = await runGit([...pinnedEndpoint(url), 'lfs', 'fetch', '--', url, commit], { cwd: scratch, timeoutMs });
    return await look(fetched, join(scratch, '.git', 'lfs', 'objects'));
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Uploads the content of every LFS pointer in `commit` to `remoteUrl` with `git lfs push
 * --object-id` (no pre-push hook does it: the daemon runs none), then proves the remote has each.
 */
export async function publishLfs(root: string, commit: string, remoteUrl: string, timeoutMs: number): Promise<{ objects: number }> {
  const pointers = await lfsPointers(root, commit);
  if (pointers.length === 0) return { objects: 0 };
  const url = dataArg(lfsUrl(root, remoteUrl), 'remote URL');
  const version = await runGit(['lfs', 'version'], { cwd: root, timeoutMs });
  if (version.code !== 0) {
    throw new HandoffError(
      'drain_blocked',
      `the snapshot holds ${pointers.length} Git LFS pointer(s) and git-lfs is not installed, so their content cannot reach the remote (install git-lfs)`,
      LFS_HINT,
    );
  }
  const store = await localObjects(root);
  const local: string[] = [];
  // An object this clone never downloaded cannot be uploaded from here; the check below still
  // requires the remote to have it.
  for (const pointer of pointers) if (await exists(objectPath(store, pointer.oid))) local.push(pointer.oid);
  for (let i = 0; i < local.length; i += BATCH) {
    const pushed = await runGit([...pinnedEndpoint(url), 'lfs', 'push', '--object-id', '--', url, ...local.slice(i, i + BATCH)], { cwd: root, timeoutMs });
    if (pushed.code !== 0 || pushed.timedOut || pushed.startError !== undefined) throw lfsBlocked('failed', pushed, url);
  }
  const missing = await missingOnRemote(pointers, url, timeoutMs);
  if (missing.length > 0)
    throw lfsBlocked(`is unverified: the remote lacks ${missing.length} of ${pointers.length} object(s) (${missing.slice(0, 3).join(', ')})`, null, url);
  return { objects: pointers.length };
}
