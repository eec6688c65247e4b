import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { HandoffError, isCycleId, shellQuote } from '../../protocol/index.js';
import { ManifestSchema, type Manifest } from '../../schemas/index.js';
import { NotRegularFileError, readRegularFile } from '../store/regular-file.js';
import { createAjv, describeErrors } from '../validation.js';
import { workspaceDir } from '../workspaces/workspace-dir.js';

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const validate = createAjv().compile<Manifest>(ManifestSchema);

export interface ManifestRecord {
  readonly path: string;
  readonly manifest: Manifest;
  readonly sha256: string;
}

function corrupt(path: string, why: string): HandoffError {
  return new HandoffError('corrupt_record', `${path} ${why}`, `inspect it with \`cat ${shellQuote(path)}\`; nothing was changed and no older record is used instead`);
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
  if (expectedSha256 !== null && actual !== expectedSha256) throw corrupt(path, `does not match the sha256 recorded when it was written (${expectedSha256.slice(0, 12)}…, now ${actual.slice(0, 12)}…)`);
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
