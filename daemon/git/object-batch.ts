import { dataArg } from './data-arg.js';
import { runGit, type GitResult } from './run-git.js';

const OBJECT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
/** A full SHA-1 or SHA-256 object id, as git prints them. */
export const isObjectId = (value: string): boolean => OBJECT_ID.test(value);

/**
 * Fetches the objects `wanted` lists from `remote` in one fetch without creating or moving a ref (no
 * destination, no FETCH_HEAD, `--refmap=` so no configured refspec updates one opportunistically): a
 * lookup leaves nothing in the repository but unreferenced objects, which git's gc prunes. The wants
 * go on stdin, so their number is bounded by nothing on the command line.
 */
export async function fetchObjectsOf(
  root: string,
  remote: string,
  wanted: readonly { readonly ref: string; readonly object: string }[],
  timeoutMs: number,
): Promise<GitResult> {
  dataArg(remote, 'remote');
  const fetch = (lines: readonly string[]) =>
    runGit(['fetch', '--no-tags', '--no-write-fetch-head', '--refmap=', '--stdin', '--end-of-options', remote], {
      cwd: root,
      timeoutMs,
      input: `${lines.join('\n')}\n`,
    });
  // By object id: each distinct object once, and git matches no refspec against every advertised ref
  // (by name, 1,500 refs cost a second of CPU). The ids are tips the remote just listed, which any server
  // serves; one moved since may be refused (protocol v0 without allowAnySHA1InWant): then by name.
  const ids = [...new Set(wanted.map((w) => w.object))].filter(isObjectId);
  const byId = await fetch(ids);
  if (byId.code === 0 || byId.timedOut || byId.startError !== undefined) return byId;
  return fetch(wanted.map((w) => dataArg(w.ref, 'records ref')));
}

export type BlobRead = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly why: string };

/**
 * `<object>:<path>` for each of `objects` (object ids only), read with two gits whatever their number:
 * `cat-file --batch-check` for type and size, then `cat-file --batch` for the blobs within `maxBytes`.
 */
export async function readBlobsAt(root: string, objects: readonly string[], path: string, maxBytes: number): Promise<BlobRead[]> {
  const names = objects.map((object) => {
    if (!OBJECT_ID.test(object)) throw new Error(`'${object.slice(0, 80)}' is not an object id`);
    return `${object}:${path}`;
  });
  if (names.length === 0) return [];
  const checked = await runGit(['cat-file', '--batch-check'], { cwd: root, input: `${names.join('\n')}\n` });
  if (checked.code !== 0) throw new Error(`git cat-file --batch-check exited ${checked.code}: ${checked.stderr.trim()}`);
  const answers = checked.stdout.split('\n');
  const reads: (BlobRead | { readonly blob: string })[] = names.map((_, i) => {
    const [id = '', type = '', size = ''] = (answers[i] ?? '').split(' ');
    if (type === 'missing' || type === 'ambiguous' || !OBJECT_ID.test(id)) return { ok: false, why: `${path} is missing` };
    if (type !== 'blob') return { ok: false, why: `${path} is a ${type}, not a file` };
    if (Number(size) > maxBytes) return { ok: false, why: `${path} is too large (${size} bytes, at most ${maxBytes})` };
    return { blob: id };
  });
  const wanted = reads.flatMap((read) => ('blob' in read ? [read.blob] : []));
  const blobs = await catFileBatch(root, [...new Set(wanted)]);
  return reads.map((read) => ('blob' in read ? { ok: true, text: blobs.get(read.blob)?.toString('utf8') ?? '' } : read));
}

/** The bytes of each object in `ids` (checked ones: sizes already known to be within bounds), by one `cat-file --batch`. */
async function catFileBatch(root: string, ids: readonly string[], timeoutMs?: number): Promise<Map<string, Buffer>> {
  const found = new Map<string, Buffer>();
  if (ids.length === 0) return found;
  // latin1 keeps one character per byte, so the sizes in the headers index the output exactly.
  const batch = await runGit(['cat-file', '--batch'], {
    cwd: root,
    input: `${ids.join('\n')}\n`,
    stdoutEncoding: 'latin1',
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
  if (batch.code !== 0) throw new Error(`git cat-file --batch exited ${batch.code}: ${batch.stderr.trim()}`);
  for (let at = 0; at < batch.stdout.length;) {
    const end = batch.stdout.indexOf('\n', at);
    if (end < 0) break;
    const [id = '', , size = '0'] = batch.stdout.slice(at, end).split(' ');
    const bytes = Number(size);
    found.set(id, Buffer.from(batch.stdout.slice(end + 1, end + 1 + bytes), 'latin1'));
    at = end + 1 + bytes + 1;
  }
  return found;
}

/** A blob's bytes, or why they were not read. */
export type BlobBytes = { readonly ok: true; readonly bytes: Buffer } | { readonly ok: false; readonly why: 'too_large' | 'missing' };

/**
 * The bytes of each blob in `ids`, with two gits whatever their number: `cat-file --batch-check` for
 * the sizes, then `cat-file --batch` for those within `maxBytes` (a larger one is never read whole).
 */
export async function readBlobBytes(root: string, ids: readonly string[], maxBytes: number): Promise<Map<string, BlobBytes>> {
  const result = new Map<string, BlobBytes>();
  const unique = [...new Set(ids)];
  for (const id of unique) if (!OBJECT_ID.test(id)) throw new Error(`'${id.slice(0, 80)}' is not an object id`);
  if (unique.length === 0) return result;
  const checked = await runGit(['cat-file', '--batch-check'], { cwd: root, input: `${unique.join('\n')}\n`, timeoutMs: 120_000 });
  if (checked.code !== 0) throw new Error(`git cat-file --batch-check exited ${checked.code}: ${checked.stderr.trim()}`);
  const wanted: string[] = [];
  checked.stdout.split('\n').forEach((line, i) => {
    const asked = unique[i];
    if (asked === undefined) return;
    const [, type = '', size = ''] = line.split(' ');
    if (type !== 'blob') result.set(asked, { ok: false, why: 'missing' });
    else if (Number(size) > maxBytes) result.set(asked, { ok: false, why: 'too_large' });
    else wanted.push(asked);
  });
  const blobs = await catFileBatch(root, wanted, 120_000);
  for (const id of wanted) {
    const bytes = blobs.get(id);
    result.set(id, bytes === undefined ? { ok: false, why: 'missing' } : { ok: true, bytes });
  }
  return result;
}
