import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { checkpointRef, HandoffError, isCycleId, shellQuote, type RemoteLeaseRecord } from '../../protocol/index.js';
import { ManifestSchema, TravellingManifestSchema, type Manifest } from '../../schemas/index.js';
import { refusedRecord } from '../evacuation/remote-records.js';
import { NotRegularFileError, readRegularFile } from '../store/regular-file.js';
import { precompiled } from '../precompiled.js';
import { describeErrors } from '../schema-check.js';
import { workspaceDir } from '../workspaces/workspace-dir.js';

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const validate = precompiled<Manifest>(ManifestSchema);
const validateTravelling = precompiled(TravellingManifestSchema);

export interface ManifestRecord {
  readonly path: string;
  readonly manifest: Manifest;
  readonly sha256: string;
}

function corrupt(path: string, why: string): HandoffError {
  return new HandoffError(
    'corrupt_record',
    `${path} ${why}`,
    `inspect it with \`cat ${shellQuote(path)}\`; nothing was changed and no older record is used instead`,
  );
}

/**
 * Reads one manifest and proves it: its bytes hash to what the journal recorded (when known), it
 * parses and validates, and every artifact it lists hashes to its recorded sha256. Anything else is
 * `corrupt_record` (74) — never a fallback to another revision.
 */
export async function readManifest(path: string, expectedSha256: string | null): Promise<ManifestRecord> {
  let bytes: Buffer;
  try {
    // Neither the manifest nor an artifact is read through a symbolic link (daemon/store/regular-file.ts).
    bytes = await readRegularFile(path);
  } catch (error) {
    throw corrupt(path, `cannot be read (${error instanceof NotRegularFileError ? error.what : ((error as NodeJS.ErrnoException).code ?? 'error')})`);
  }
  const actual = sha256(bytes);
  if (expectedSha256 !== null && actual !== expectedSha256)
    throw corrupt(path, `does not match the sha256 recorded when it was written (${expectedSha256.slice(0, 12)}…, now ${actual.slice(0, 12)}…)`);
  let manifest: unknown;
  try {
    manifest = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw corrupt(path, 'is not JSON');
  }
  if (!validate(manifest)) throw corrupt(path, `does not match the manifest schema: ${describeErrors(validate.errors, 'manifest')}`);
  // Artifact paths are relative to the cycle directory; return-leg manifests sit one level below it.
  const parent = dirname(path);
  const base = basename(parent) === 'return' && isCycleId(basename(dirname(parent))) ? dirname(parent) : parent;
  for (const artifact of manifest.integrity.artifacts) {
    const artifactPath = join(base, artifact.path);
    const found = await readRegularFile(artifactPath).catch(() => null);
    if (found === null || sha256(found) !== artifact.sha256) throw corrupt(artifactPath, 'does not match the sha256 its manifest records');
  }
  return { path, manifest, sha256: actual };
}

/**
 * A package read from a remote, proven in memory before anything of it is written or used: its
 * paths stay inside the cycle, the manifest the lease record names hashes to its sha256, matches the
 * manifest schema and the strict travelling one (a pushed `refs/heads/handoff/<cycle>[-return]`, object
 * ids, no option or climbing path), and every artifact it lists hashes to what it records.
 */
export function proveTravellingPackage(
  files: Readonly<Record<string, string>>,
  wanted: { cycle: string; leg: 'out' | 'return'; manifest: RemoteLeaseRecord['manifest']; remote: string; ref: string },
): Manifest {
  const { cycle, leg, remote, ref } = wanted;
  for (const path of Object.keys(files)) {
    const parts = path.split('/');
    if (parts[0] !== cycle || parts.length < 2 || parts.some((p) => p === '..' || p === '' || p === '.'))
      throw refusedRecord(ref, remote, `the package holds a path outside cycle ${cycle}: ${path.slice(0, 200)}`);
  }
  const text = files[`${cycle}/${wanted.manifest.path}`];
  if (text === undefined) throw refusedRecord(ref, remote, `lease.manifest.path names ${wanted.manifest.path}, which the package does not hold`);
  if (sha256(text) !== wanted.manifest.sha256) throw refusedRecord(ref, remote, `${wanted.manifest.path} does not match lease.manifest.sha256`);
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch {
    throw refusedRecord(ref, remote, `${wanted.manifest.path} is not JSON`);
  }
  if (!validate(manifest)) throw refusedRecord(ref, remote, describeErrors(validate.errors, 'manifest'));
  if (!validateTravelling(manifest)) throw refusedRecord(ref, remote, describeErrors(validateTravelling.errors, 'manifest'));
  if (manifest.cycle_id !== cycle) throw refusedRecord(ref, remote, `manifest.cycle_id is ${manifest.cycle_id}, not ${cycle}`);
  if (manifest.leg !== leg) throw refusedRecord(ref, remote, `manifest.leg is ${manifest.leg}, not ${leg}`);
  if (manifest.checkpoint.ref !== checkpointRef(cycle, leg)) throw refusedRecord(ref, remote, `manifest.checkpoint.ref is not ${checkpointRef(cycle, leg)}`);
  const named = new Set([`${cycle}/${wanted.manifest.path}`]);
  // Every file of the package is one a manifest of it names: the offered one, the revisions it
  // supersedes (each found by the sha256 its successor records as predecessor) and their artifacts.
  for (let current: Manifest | null = manifest; current !== null;) {
    // Artifact paths are relative to the cycle's directory, the return leg's `return/…` included.
    for (const artifact of current.integrity.artifacts) {
      const found = files[`${cycle}/${artifact.path}`];
      if (found === undefined || sha256(found) !== artifact.sha256)
        throw refusedRecord(ref, remote, `manifest.integrity.artifacts names ${artifact.path}, which the package does not hold with that sha256`);
      named.add(`${cycle}/${artifact.path}`);
    }
    current = predecessorIn(files, named, current.predecessor, { cycle, remote, ref });
  }
  // A holder's ended return legs travel with its next one (daemon/evacuation/abandoned-record.ts).
  const unnamed = Object.keys(files).filter((path) => !named.has(path) && !(leg === 'return' && ABANDONED_RETURN.test(path.slice(cycle.length + 1))));
  if (unnamed[0] !== undefined)
    throw refusedRecord(ref, remote, `the package holds ${unnamed[0].slice(0, 200)}, which none of its manifests names (${unnamed.length} such file(s))`);
  return manifest;
}

const ABANDONED_RETURN = /^return\/abandoned-[0-9TZ]+\.json$/;
const PACKAGE_MANIFEST = /^(return\/)?manifest(\.\d+)?\.json$/;

/** The earlier revision a manifest names as its predecessor, when the package carries it: proven like the offered one. */
function predecessorIn(
  files: Readonly<Record<string, string>>,
  named: Set<string>,
  predecessor: string | null,
  where: { cycle: string; remote: string; ref: string },
): Manifest | null {
  if (predecessor === null) return null;
  const { cycle, remote, ref } = where;
  const found = Object.entries(files).find(
    ([path, text]) => !named.has(path) && PACKAGE_MANIFEST.test(path.slice(cycle.length + 1)) && sha256(text) === predecessor,
  );
  if (found === undefined) return null;
  const [path, text] = found;
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch {
    throw refusedRecord(ref, remote, `${path.slice(0, 200)} is not JSON`);
  }
  if (!validate(manifest)) throw refusedRecord(ref, remote, describeErrors(validate.errors, 'manifest'));
  if (!validateTravelling(manifest)) throw refusedRecord(ref, remote, describeErrors(validateTravelling.errors, 'manifest'));
  if (manifest.cycle_id !== cycle) throw refusedRecord(ref, remote, `${path.slice(0, 200)}: manifest.cycle_id is ${manifest.cycle_id}, not ${cycle}`);
  named.add(path);
  return manifest;
}

export interface RevisionView {
  readonly path: string;
  readonly leg: 'out' | 'return';
  readonly revision: number | null;
  readonly sha256: string | null;
  readonly integrity: 'ok' | 'failed';
  readonly problem: string | null;
  /** false once a later revision names this one as its predecessor. */
  readonly current: boolean;
  readonly created_at: string | null;
  readonly checkpoint: Manifest['checkpoint'] | null;
}

const MANIFEST_FILE = /^manifest(\.\d+)?\.json$/;

/** Every manifest revision of a cycle, each checked; superseded ones say `current: false`. Deletes nothing. */
export async function cycleRevisions(root: string, cycle: string): Promise<RevisionView[]> {
  const dir = join(workspaceDir(root), cycle);
  const paths: { path: string; leg: 'out' | 'return' }[] = [];
  for (const leg of ['out', 'return'] as const) {
    const sub = join(dir, leg === 'return' ? 'return' : '');
    const entries = await readdir(sub).catch(() => [] as string[]);
    for (const name of entries.filter((n) => MANIFEST_FILE.test(n)).sort()) paths.push({ path: join(sub, name), leg });
  }
  const read = await Promise.all(
    paths.map(async ({ path, leg }) => {
      try {
        return { path, leg, record: await readManifest(path, null), problem: null };
      } catch (error) {
        return { path, leg, record: null, problem: (error as Error).message };
      }
    }),
  );
  const predecessors = new Set(read.map((r) => r.record?.manifest.predecessor).filter((p): p is string => typeof p === 'string'));
  return read
    .map(({ path, leg, record, problem }): RevisionView => ({
      path,
      leg,
      revision: record?.manifest.revision ?? null,
      sha256: record?.sha256 ?? null,
      integrity: record === null ? 'failed' : 'ok',
      problem,
      current: record !== null && !predecessors.has(record.sha256),
      created_at: record?.manifest.created_at ?? null,
      checkpoint: record?.manifest.checkpoint ?? null,
    }))
    .sort((a, b) => (a.leg === b.leg ? (a.revision ?? 0) - (b.revision ?? 0) : a.leg === 'out' ? -1 : 1));
}

/** The cycle ids recorded in a workspace's `.session-handoff/`, oldest first. */
export async function recordedCycles(root: string): Promise<string[]> {
  const entries = await readdir(workspaceDir(root)).catch(() => [] as string[]);
  return entries.filter(isCycleId).sort();
}
