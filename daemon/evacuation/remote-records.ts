import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import {
  clipChars,
  displayRemote,
  HandoffError,
  isCycleId,
  leaseRef,
  LEASE_RECORD_FILE,
  offered,
  offerReturn,
  packagesRef,
  printable,
  serializeLeaseRecord,
  type RemoteLeaseRecord,
} from '../../protocol/index.js';
import { RemoteLeaseRecordSchema, type RemoteLeaseRecordData } from '../../schemas/index.js';
import { commitFiles, fetchRecordsRef, filesAt, git, pushRecordsRef } from '../git/index.js';
import { precompiled } from '../precompiled.js';
import { describeErrors } from '../validation.js';
import { cycleDir } from './package-writer.js';

/** Every file of a cycle's package directory, keyed `<cycle>/<path>` as they travel on the packages ref. */
async function packageFiles(home: string, cycle: string): Promise<Record<string, string>> {
  const dir = cycleDir(home, cycle);
  const files: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files[`${cycle}/${relative(dir, path)}`] = await readFile(path, 'utf8');
  }
  return files;
}

const same = (a: Record<string, string>, b: Record<string, string>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

function unreachable(what: string, why: string): HandoffError {
  return new HandoffError('drain_blocked', `publishing the ${what} failed: ${why}`, 'the handoff is not offered until the records are on the remote; fix the remote, then run `handoff resume`');
}

/**
 * The package travels: a commit holding `.session-handoff/<cycle>/` on `refs/handoff/packages/<cycle>`,
 * a child of what the remote has (fast-forward only). Looks first, so a resumed drain pushes nothing twice.
 */
export async function publishPackage(work: string, home: string, cycle: string, remote: string, at: string, timeoutMs: number): Promise<string> {
  const ref = packagesRef(cycle);
  const files = await packageFiles(home, cycle);
  const current = await fetchRecordsRef(work, remote, ref, timeoutMs);
  if (!current.ok) throw unreachable('package', current.why);
  if (current.commit !== null && same(await filesAt(work, current.commit), files)) return current.commit;
  const commit = await commitFiles(work, files, current.commit, `handoff ${cycle}: package`, at);
  const pushed = await pushRecordsRef(work, remote, commit, ref, timeoutMs);
  if (!pushed.ok) throw unreachable('package', pushed.why);
  return commit;
}

const validateLease = precompiled<RemoteLeaseRecordData>(RemoteLeaseRecordSchema);

/** A record from the remote that fails its checks: named by field, shown printable and short, never used. */
export function refusedRecord(what: string, remote: string, why: string): HandoffError {
  return new HandoffError(
    'corrupt_record',
    `${what} on '${displayRemote(remote)}' is refused: ${clipChars(printable(why), 600)}`,
    'whoever can push to that remote wrote it; nothing was fetched or run from it. Inspect it with `git fetch REMOTE REF` and `git show FETCH_HEAD`',
  );
}

/** Checks a lease record against its schema (strict patterns) and the cycle it was read for. */
export function leaseRecordOf(text: string, cycle: string, remote: string): RemoteLeaseRecord {
  const what = leaseRef(cycle);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw refusedRecord(what, remote, `${LEASE_RECORD_FILE} is missing or not JSON`);
  }
  if (!validateLease(value)) throw refusedRecord(what, remote, describeErrors(validateLease.errors, 'lease'));
  if (value.cycle !== cycle) throw refusedRecord(what, remote, `lease.cycle is ${value.cycle}, not ${cycle}`);
  return value;
}

/** Bounds on what a records ref may hold, checked from the tree listing before any blob is read. */
const MAX_FILES = 64;
const MAX_FILE_BYTES = 4 * 1024 * 1024;
const MAX_TOTAL_BYTES = 16 * 1024 * 1024;

async function boundedFilesAt(work: string, commit: string, what: string, remote: string): Promise<Record<string, string>> {
  const listing = (await git(['ls-tree', '-r', '-l', '-z', '--end-of-options', commit], { cwd: work })).split('\0').filter(Boolean);
  if (listing.length > MAX_FILES) throw refusedRecord(what, remote, `it holds ${listing.length} files (at most ${MAX_FILES})`);
  let total = 0;
  for (const line of listing) {
    const [meta = '', path = ''] = line.split('\t');
    const [, type, , size] = meta.split(/\s+/);
    if (type !== 'blob') throw refusedRecord(what, remote, `${clipChars(path, 200)} is a ${type ?? 'thing'}, not a file`);
    total += Number(size);
    if (Number(size) > MAX_FILE_BYTES || total > MAX_TOTAL_BYTES) throw refusedRecord(what, remote, `${clipChars(path, 200)} is too large (${size} bytes)`);
  }
  return filesAt(work, commit);
}

export async function readLease(work: string, remote: string, cycle: string, timeoutMs: number): Promise<{ head: string | null; record: RemoteLeaseRecord | null }> {
  if (!isCycleId(cycle)) throw new HandoffError('invalid_body', `'${clipChars(printable(cycle), 100)}' is not a cycle id`, 'cycle ids look like 20261129T081500Z-k3f7qa');
  const fetched = await fetchRecordsRef(work, remote, leaseRef(cycle), timeoutMs);
  if (!fetched.ok) throw new HandoffError('remote_unreachable', `the lease of cycle ${cycle} on '${displayRemote(remote)}' cannot be read: ${fetched.why}`, 'check the network and the remote, then retry; nothing was changed');
  if (fetched.commit === null) return { head: null, record: null };
  const files = await boundedFilesAt(work, fetched.commit, leaseRef(cycle), remote);
  return { head: fetched.commit, record: leaseRecordOf(files[LEASE_RECORD_FILE] ?? '', cycle, remote) };
}

/** Pushes `record` as a child of `head`; a rejection means another machine moved the lease first. */
export async function writeLease(work: string, remote: string, record: RemoteLeaseRecord, head: string | null, timeoutMs: number): Promise<{ ok: true; head: string } | { ok: false; rejected: boolean; why: string }> {
  const commit = await commitFiles(work, { [LEASE_RECORD_FILE]: serializeLeaseRecord(record) }, head, `handoff ${record.cycle}: lease ${record.state}${record.holder ? ` to ${record.holder.executor}` : ''}`, record.at);
  const pushed = await pushRecordsRef(work, remote, commit, leaseRef(record.cycle), timeoutMs);
  return pushed.ok ? { ok: true, head: commit } : pushed;
}

export interface OfferRequest {
  readonly leg: 'out' | 'return';
  readonly cycle: string;
  readonly manifest: RemoteLeaseRecord['manifest'];
  readonly lastToken: number;
  readonly holder: RemoteLeaseRecord['holder'];
  /** The return leg is offered with the token the chain gave its holder. */
  readonly token: number | null;
  readonly at: string;
}

/** The lease travels: the out leg starts the chain with `offered`, the return leg appends `return_offered`. */
export async function publishLeaseOffer(work: string, remote: string, request: OfferRequest, timeoutMs: number): Promise<string> {
  const { head, record } = await readLease(work, remote, request.cycle, timeoutMs).catch((error: HandoffError) => {
    throw unreachable('lease', error.message);
  });
  const wanted = request.leg === 'out' ? 'offered' : 'return_offered';
  // Already there (a resumed drain): nothing to push.
  if (record !== null && record.state === wanted && record.manifest.sha256 === request.manifest.sha256 && head !== null) return head;
  let next: RemoteLeaseRecord;
  if (request.leg === 'out') {
    if (record !== null) throw new HandoffError('drain_blocked', `cycle ${request.cycle} already has a lease on the remote (${record.state})`, 'inspect refs/handoff/lease on the remote; nothing was changed');
    next = offered(request.cycle, request.lastToken, request.holder, request.manifest, request.at);
  } else {
    if (record === null) throw new HandoffError('drain_blocked', `cycle ${request.cycle} has no lease on the remote to hand back`, 'the cycle was accepted without the remote; hand back on the same machine');
    const moved = offerReturn(record, request.token ?? 0, request.manifest, request.at);
    if (!moved.ok) throw new HandoffError('drain_blocked', moved.reason, 'the lease moved on the remote; this holder must stop');
    next = moved.record;
  }
  const written = await writeLease(work, remote, next, head, timeoutMs);
  if (!written.ok) throw written.rejected ? new HandoffError('drain_blocked', `the lease of cycle ${request.cycle} moved on the remote while offering`, 'run `handoff status` to see the holder') : unreachable('lease', written.why);
  return written.head;
}

/** Fetches the packages ref and returns its files (`<cycle>/...` → text), or null when the remote has none. */
export async function readPackages(work: string, remote: string, cycle: string, timeoutMs: number): Promise<Record<string, string> | null> {
  const fetched = await fetchRecordsRef(work, remote, packagesRef(cycle), timeoutMs);
  if (!fetched.ok) throw new HandoffError('remote_unreachable', `the package of cycle ${cycle} on '${displayRemote(remote)}' cannot be read: ${fetched.why}`, 'check the network and the remote, then retry; nothing was changed');
  return fetched.commit === null ? null : boundedFilesAt(work, fetched.commit, packagesRef(cycle), remote);
}
