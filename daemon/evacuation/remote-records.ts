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
  type Code,
  type RemoteLeaseRecord,
} from '../../protocol/index.js';
import { RemoteLeaseRecordSchema, type RemoteLeaseRecordData } from '../../schemas/index.js';
import {
  boundedFilesAt as filesWithin,
  commitFiles,
  currentRef,
  dataArg,
  fetchRecordsRef,
  fetchRecordsRefs,
  git,
  pushRecordsRef,
  runGit,
  type RecordBounds,
  type RefUpdate,
} from '../git/index.js';
import { precompiled } from '../precompiled.js';
import { describeErrors } from '../schema-check.js';
import { cycleDir } from './package-writer.js';
import { refuseSecrets } from './record-secrets.js';

/** Every records commit is made here, once its files and its message passed the secret scan. */
async function commitRecord(
  work: string,
  files: Readonly<Record<string, string>>,
  parent: string | null,
  message: string,
  at: string,
  refused: { what: string; code: Code },
): Promise<string> {
  await refuseSecrets({ ...files, 'commit message': message }, refused.what, refused.code);
  return commitFiles(work, files, parent, message, at);
}

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

/**
 * The package's travelling record, made locally: a commit holding `.session-handoff/<cycle>/` as a
 * child of what this repository last published on `refs/handoff/packages/<cycle>` (fast-forward only).
 * When that already holds exactly these files (a resumed drain), it is the answer: nothing new.
 */
export async function packageRecord(work: string, home: string, cycle: string, at: string): Promise<string> {
  const files = await packageFiles(home, cycle);
  const current = await currentRef(work, packagesRef(cycle));
  // Bounded: the local ref may hold what a fetch brought from the remote (a return leg follows its records).
  if (current !== null && same(await boundedFilesAt(work, current, packagesRef(cycle), 'this repository'), files)) return current;
  return commitRecord(work, files, current, `handoff ${cycle}: package`, at, { what: `the package record of cycle ${cycle}`, code: 'drain_blocked' });
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

/** What a records ref may hold (a package is a handful of files two levels deep), checked before git lists it. */
const RECORD_BOUNDS: RecordBounds = { maxEntries: 64, maxDepth: 4, maxFileBytes: 4 * 1024 * 1024, maxTotalBytes: 16 * 1024 * 1024 };

async function boundedFilesAt(work: string, commit: string, what: string, remote: string): Promise<Record<string, string>> {
  const read = await filesWithin(work, commit, RECORD_BOUNDS);
  if (!read.ok) throw refusedRecord(what, remote, clipChars(read.why, 400));
  return read.files;
}

export async function readLease(
  work: string,
  remote: string,
  cycle: string,
  timeoutMs: number,
): Promise<{ head: string | null; record: RemoteLeaseRecord | null }> {
  if (!isCycleId(cycle))
    throw new HandoffError('invalid_body', `'${clipChars(printable(cycle), 100)}' is not a cycle id`, 'cycle ids look like 20261129T081500Z-k3f7qa');
  const fetched = await fetchRecordsRef(work, remote, leaseRef(cycle), timeoutMs);
  if (!fetched.ok)
    throw new HandoffError(
      'remote_unreachable',
      `the lease of cycle ${cycle} on '${displayRemote(remote)}' cannot be read: ${fetched.why}`,
      'check the network and the remote, then retry; nothing was changed',
    );
  if (fetched.commit === null) return { head: null, record: null };
  const files = await boundedFilesAt(work, fetched.commit, leaseRef(cycle), remote);
  return { head: fetched.commit, record: leaseRecordOf(files[LEASE_RECORD_FILE] ?? '', cycle, remote) };
}

/**
 * The record before `head` on the chain (already fetched with it): what a machine that was away
 * missed, e.g. the `taken` under a `broken` or `released`. Checked like every record read from a remote.
 */
export async function previousLease(work: string, remote: string, cycle: string, head: string): Promise<{ head: string; record: RemoteLeaseRecord } | null> {
  const parent = await runGit(['rev-parse', '--verify', '--quiet', '--end-of-options', `${head}^1`], { cwd: work });
  const commit = parent.stdout.trim();
  if (parent.code !== 0 || commit === '') return null;
  const files = await boundedFilesAt(work, commit, leaseRef(cycle), remote);
  return { head: commit, record: leaseRecordOf(files[LEASE_RECORD_FILE] ?? '', cycle, remote) };
}

/**
 * The records after `known` up to `head` (oldest first), following first parents from `head`: the
 * chain this machine has not seen yet. A head that does not descend from `known` (a forced rewrite), or
 * more than MAX_CHAIN_WALK records away, is refused: nothing may be followed from it.
 */
const MAX_CHAIN_WALK = 64;
export async function leaseChainSince(
  work: string,
  remote: string,
  cycle: string,
  known: string,
  head: string,
): Promise<{ known: RemoteLeaseRecord; later: { head: string; record: RemoteLeaseRecord }[] }> {
  const what = leaseRef(cycle);
  const recordAt = async (commit: string) => leaseRecordOf((await boundedFilesAt(work, commit, what, remote))[LEASE_RECORD_FILE] ?? '', cycle, remote);
  const later: { head: string; record: RemoteLeaseRecord }[] = [];
  let at: string | null = head;
  for (let step = 0; at !== null && at !== known; step++) {
    if (step >= MAX_CHAIN_WALK)
      throw refusedRecord(what, remote, `its head ${head} is more than ${MAX_CHAIN_WALK} records past ${known}, the record this machine knows`);
    later.unshift({ head: at, record: await recordAt(at) });
    const parent = await runGit(['rev-parse', '--verify', '--quiet', '--end-of-options', `${at}^1`], { cwd: work });
    at = parent.code === 0 && parent.stdout.trim() !== '' ? parent.stdout.trim() : null;
  }
  if (at === null) throw refusedRecord(what, remote, `its head ${head} does not descend from ${known}, the record this machine knows (the ref was rewritten)`);
  return { known: await recordAt(known), later };
}

/** Why a write-through did not land: a rejection (another move came first), the remote's policy, an unknown outcome. */
export type LeaseWrite =
  | { readonly ok: true; readonly head: string }
  | { readonly ok: false; readonly rejected: boolean; readonly why: string; readonly outcome?: 'refused' | 'unknown' };

/**
 * Pushes `record` as a child of `head`; a rejection means another machine moved the lease first. The
 * record is checked against its schema first (a record every reader would refuse is never pushed), and
 * the ref is read back from where records are read (a push may time out after the remote moved, or go to
 * another pushurl): the answer is what is there.
 */
export async function writeLease(work: string, remote: string, record: RemoteLeaseRecord, head: string | null, timeoutMs: number): Promise<LeaseWrite> {
  if (!validateLease(structuredClone(record))) {
    throw new HandoffError(
      'corrupt_record',
      `the lease record this move would write fails its schema (${describeErrors(validateLease.errors, 'lease')}); nothing was pushed`,
      `the chain ${leaseRef(record.cycle)} on '${displayRemote(remote)}' holds last_token ${record.last_token}: no token is left above it. Inspect it with \`git fetch ${displayRemote(remote)} ${leaseRef(record.cycle)}\``,
    );
  }
  // A secret here came with the request (an executor name): a 4xx, nothing written.
  const commit = await commitRecord(
    work,
    { [LEASE_RECORD_FILE]: serializeLeaseRecord(record) },
    head,
    `handoff ${record.cycle}: lease ${record.state}${record.holder ? ` to ${record.holder.executor}` : ''}`,
    record.at,
    { what: `the lease record of cycle ${record.cycle}`, code: 'invalid_body' },
  );
  const ref = leaseRef(record.cycle);
  const pushed = await pushRecordsRef(work, remote, commit, ref, timeoutMs);
  // Another move first, or the remote's policy: git refused this ref as a whole, nothing to read back.
  if (!pushed.ok && (pushed.rejected || pushed.refused))
    return { ok: false, rejected: pushed.rejected, why: pushed.why, ...(pushed.refused ? { outcome: 'refused' as const } : {}) };
  const read = await fetchRecordsRef(work, remote, ref, timeoutMs);
  const where = `'${displayRemote(remote)}' (${ref})`;
  if (!read.ok) {
    return {
      ok: false,
      rejected: false,
      outcome: 'unknown',
      why: `${pushed.ok ? 'the push was answered' : `the push failed (${pushed.why})`} but ${where} could not be read back (${read.why}): whether the lease moved is unknown; \`handoff status\` reads it again`,
    };
  }
  if (read.commit === commit) return { ok: true, head: commit };
  if (read.commit === head) {
    return {
      ok: false,
      rejected: false,
      why: pushed.ok
        ? `the push was answered but ${where} still holds the old record: pushes go elsewhere than reads (remote.${displayRemote(remote)}.pushurl?)`
        : pushed.why,
    };
  }
  return { ok: false, rejected: true, why: `${where} holds ${read.commit ?? 'no record'} now` };
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

/**
 * The lease offer's record, made locally: the out leg starts the chain with `offered` (a later revision
 * appends its own `offered`); the return leg
 * appends `return_offered` to the head this repository knows (a remote that moved since refuses the
 * push, all or nothing). A record already holding this offer (a resumed drain) is the answer.
 */
export async function leaseOfferRecord(work: string, request: OfferRequest): Promise<string> {
  const ref = leaseRef(request.cycle);
  const head = await currentRef(work, ref);
  const record =
    head === null ? null : leaseRecordOf((await boundedFilesAt(work, head, ref, 'this repository'))[LEASE_RECORD_FILE] ?? '', request.cycle, 'this repository');
  const wanted = request.leg === 'out' ? 'offered' : 'return_offered';
  if (head !== null && record !== null && record.state === wanted && record.manifest.sha256 === request.manifest.sha256) return head;
  let next: RemoteLeaseRecord;
  if (request.leg === 'out') {
    // A later revision re-offers with its own manifest; a lease someone already took is not offered again.
    if (record !== null && record.state !== 'offered')
      throw new HandoffError(
        'drain_blocked',
        `cycle ${request.cycle} already has a lease record (${record.state})`,
        'run `handoff status`: the lease moved on; nothing was changed',
      );
    next = offered(request.cycle, request.lastToken, request.holder, request.manifest, request.at);
  } else {
    if (record === null)
      throw new HandoffError(
        'drain_blocked',
        `cycle ${request.cycle} has no lease record to hand back`,
        'the cycle was accepted without the remote; hand back on the same machine',
      );
    const moved = offerReturn(record, request.token ?? 0, request.manifest, request.at);
    if (!moved.ok) throw new HandoffError('drain_blocked', moved.reason, 'the lease moved on the remote; this holder must stop');
    next = moved.record;
  }
  return commitRecord(
    work,
    { [LEASE_RECORD_FILE]: serializeLeaseRecord(next) },
    head,
    `handoff ${next.cycle}: lease ${next.state}${next.holder ? ` to ${next.holder.executor}` : ''}`,
    next.at,
    { what: `the lease offer of cycle ${next.cycle}`, code: 'drain_blocked' },
  );
}

/**
 * A return leg chains on the records the out leg published, maybe from another checkout: when this
 * one does not hold the lease head the cycle knows, both records refs are fetched first (one fetch).
 */
export async function followRecords(work: string, remote: string, cycle: string, leaseHead: string | null, timeoutMs: number): Promise<void> {
  if (leaseHead === null || (await currentRef(work, leaseRef(cycle))) === leaseHead) return;
  const fetched = await fetchRecordsRefs(work, remote, [packagesRef(cycle), leaseRef(cycle)], timeoutMs);
  if (!fetched.ok) {
    throw new HandoffError(
      'drain_blocked',
      `the records of cycle ${cycle} cannot be read from '${displayRemote(remote)}': ${fetched.why}`,
      'check the network and the remote, then run `handoff resume`',
    );
  }
}

/** After the remote holds them: this repository's records refs follow, so the next record chains on them. */
export async function adoptPublished(work: string, updates: readonly RefUpdate[]): Promise<void> {
  if (updates.length === 0) return;
  // One transaction, one git process, however many refs.
  const input = updates.map(({ ref, commit }) => `update ${dataArg(ref, 'ref')}\0${dataArg(commit, 'commit')}\0\0`).join('');
  await git(['update-ref', '-z', '--stdin'], { cwd: work, input });
}

/** Fetches the packages ref and returns its files (`<cycle>/...` → text), or null when the remote has none. */
export async function readPackages(work: string, remote: string, cycle: string, timeoutMs: number): Promise<Record<string, string> | null> {
  const fetched = await fetchRecordsRef(work, remote, packagesRef(cycle), timeoutMs);
  if (!fetched.ok)
    throw new HandoffError(
      'remote_unreachable',
      `the package of cycle ${cycle} on '${displayRemote(remote)}' cannot be read: ${fetched.why}`,
      'check the network and the remote, then retry; nothing was changed',
    );
  return fetched.commit === null ? null : boundedFilesAt(work, fetched.commit, packagesRef(cycle), remote);
}
