import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config, Unscanned, Withheld } from '../../schemas/index.js';
import { currentRef, git, headAndIndex, OWN_FILES_EXCLUDE, runGit, workTreeSnapshot, type HeadAndIndex } from '../git/index.js';
import { daemonCommitEnv } from '../git/daemon-identity.js';
import { openVerdictCache } from '../evacuation/scan-verdicts.js';
import type { SecretScan } from '../evacuation/secret-scan.js';
import { readAllowList } from '../evacuation/secret-allow.js';
import { writeFileAtomic } from '../store/index.js';

/**
 * PREPARE's local package: the snapshot an evacuation would make, written ahead into this
 * repository's object store, its commit on a ref of the daemon's own local namespace (never pushed:
 * outside `refs/heads/handoff/` and `refs/handoff/`, which are all the drain pushes and prune reads,
 * docs/refs.md), and the scratch index that built it kept in the state dir with the secret scan's
 * verdicts. EVACUATE's drain starts from that index: git's stat data tells it which files changed
 * since, and only those are scanned and hashed again.
 */
export const rehearsalRef = (root: string): string => `refs/session-handoff/rehearsal/${workspaceKey(root)}`;

const workspaceKey = (root: string): string => createHash('sha256').update(root).digest('hex').slice(0, 32);
const sha256 = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');
const packageFile = (dir: string, root: string): string => join(dir, `${workspaceKey(root)}.package.json`);

const GIT_TIMEOUT_MS = 120_000;

/** What a package records: everything its reuse depends on, and the scan's verdicts for the files it holds. */
interface PackageRecord {
  readonly version: 1;
  readonly root: string;
  readonly created_at: string;
  readonly head: string;
  /**
   * The user's index as git lists it — every entry's mode, blob, stage and flags (sparse,
   * assume-unchanged): all shape the snapshot. Not its bytes: an editor's `git status` rewrites
   * those with fresh stat data and nothing else.
   */
  readonly user_index: string;
  /** The allow list as read (its verdicts depend on it) and the scanner's fingerprint. */
  readonly allow: string;
  readonly scanner: string;
  readonly index_file: string;
  readonly index_sha256: string;
  readonly tree: string;
  readonly commit: string;
  readonly withheld: readonly Withheld[];
  readonly withhold: readonly string[];
  readonly allowed: readonly string[];
  readonly unscanned: readonly { readonly path: string; readonly why: Unscanned }[];
  readonly seen: readonly (readonly [string, readonly string[]])[];
}

const fileSha = (path: string): Promise<string | null> =>
  readFile(path).then(sha256, (error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });

async function userIndexKey(root: string): Promise<string> {
  return sha256(await git(['ls-files', '--stage', '-v', '-z'], { cwd: root, timeoutMs: GIT_TIMEOUT_MS }));
}

async function allowKey(root: string): Promise<string> {
  const list = await readAllowList(root);
  return JSON.stringify([list.source, [...list.paths].sort()]);
}

export interface PackageOptions {
  /** `<state dir>/rehearsal`: the package's record and index live there (0700). */
  readonly dir: string;
  readonly stateDir: string;
  readonly config: Pick<Config, 'secret_scan'>;
  readonly now: () => number;
  /** An id no earlier package of this workspace had: its index file's name. */
  readonly id: string;
  readonly stillWanted: () => boolean;
}

export interface WrittenPackage {
  /** Files the drain would push whose contents were judged (read now, or known from the verdict cache). */
  readonly judged: number;
  readonly withheld: number;
  readonly tree: string;
}

/**
 * Writes the local package: the secret scan (into the verdict cache too), the snapshot's tree in a
 * scratch index kept for the drain, its commit on rehearsalRef, then the record, last and atomically —
 * a crash anywhere before leaves the previous record, whose index and commit no longer match it, or
 * none: the drain then verifies, finds no match and takes its full path. Null when it stopped early.
 */
export async function writeLocalPackage(root: string, options: PackageOptions): Promise<WrittenPackage | null> {
  // Loaded here, as the drain loads it: secretlint is the largest part of the daemon an idle one never runs.
  const { scanForSecrets, secretlintFingerprint } = await import('../evacuation/secret-scan.js');
  const { auditStaged } = await import('../evacuation/staged-audit.js');
  const repository = await headAndIndex(root);
  if (repository.head === null) return null;
  const head = repository.head;
  const [userIndex, allow] = await Promise.all([userIndexKey(root), allowKey(root)]);
  const verdicts = await openVerdictCache(options.stateDir, secretlintFingerprint());
  const seen = new Map<string, readonly string[]>();
  let scan: SecretScan;
  try {
    scan = await scanForSecrets(root, {
      timeoutMs: options.config.secret_scan.timeout_ms,
      maxFileBytes: options.config.secret_scan.max_file_bytes,
      // The scan has no cancel; a clock past its budget is how it stops at once for a drain that began.
      now: () => (options.stillWanted() ? options.now() : Number.POSITIVE_INFINITY),
      verdicts,
      seen,
      head,
    });
  } catch {
    // Past its budget or stopped for a drain: only a head start is lost; the drain scans the rest itself.
    return null;
  } finally {
    await verdicts.save();
  }
  const judged = scan.scanned + (scan.cached ?? 0);
  if (!options.stillWanted()) return null;
  await mkdir(options.dir, { recursive: true, mode: 0o700 });
  const indexFile = join(options.dir, `${workspaceKey(root)}.${options.id}.index`);
  const { tree } = await workTreeSnapshot(
    root,
    scan.withhold,
    {
      head,
      check: async (entries) => {
        const first = scan;
        scan = await auditStaged(root, entries, first, { head, maxFileBytes: options.config.secret_scan.max_file_bytes, seen });
        return scan.withhold.slice(first.withhold.length);
      },
    },
    repository.index,
    indexFile,
  );
  // Withheld entries and their paths go in pairs; a record that could not pair them is not written.
  if (scan.withheld.length !== scan.withhold.length || !options.stillWanted()) {
    await rm(indexFile, { force: true });
    return null;
  }
  const date = new Date(options.now()).toISOString();
  const env = daemonCommitEnv(date);
  const message = 'session-handoff: the rehearsal of an evacuation (a local package, never pushed)';
  const commit = await git(['commit-tree', '--no-gpg-sign', '-p', head, '-m', message, '--end-of-options', tree], { cwd: root, env });
  await git(['update-ref', '-m', message, '--end-of-options', rehearsalRef(root), commit], { cwd: root });
  const record: PackageRecord = {
    version: 1,
    root,
    created_at: date,
    head,
    user_index: userIndex,
    allow,
    scanner: secretlintFingerprint(),
    index_file: indexFile,
    index_sha256: (await fileSha(indexFile)) ?? '',
    tree,
    commit,
    withheld: scan.withheld,
    withhold: scan.withhold,
    allowed: scan.allowed,
    unscanned: scan.unscanned,
    seen: [...seen],
  };
  await writeFileAtomic(packageFile(options.dir, root), JSON.stringify(record), 0o600);
  // Earlier packages' indexes (a crash may have left one that no record names).
  const prefix = `${workspaceKey(root)}.`;
  for (const name of await readdir(options.dir)) {
    if (name.startsWith(prefix) && name.endsWith('.index') && join(options.dir, name) !== indexFile) await rm(join(options.dir, name), { force: true });
  }
  return { judged, withheld: scan.withheld.length, tree };
}

/** A package the drain verified and may start from. */
export interface OpenedPackage {
  /** A copy of the package's index (the drain's own), with its mtime: the base of the drain's scratch index. */
  readonly index: string;
  /** Paths changed since the rehearsal (modified, deleted or new): the only ones scanned again. */
  readonly since: readonly string[];
  readonly created_at: string;
  readonly tree: string;
  /** Carries the package's verdicts for every file not changed since into the drain's fresh scan of the rest. */
  carry(fresh: SecretScan, seen: Map<string, readonly string[]>): SecretScan;
  dispose(): Promise<void>;
}

/** Why no package was used: said in the drain's journal. */
export type NoPackage = { readonly reason: string };

function recordOf(value: unknown): PackageRecord | null {
  if (typeof value !== 'object' || value === null) return null;
  const record = value as Partial<PackageRecord>;
  const strings = [
    record.root,
    record.created_at,
    record.head,
    record.user_index,
    record.allow,
    record.scanner,
    record.index_file,
    record.index_sha256,
    record.tree,
    record.commit,
  ];
  const lists = [record.withheld, record.withhold, record.allowed, record.unscanned, record.seen];
  if (record.version !== 1 || !strings.every((field) => typeof field === 'string') || !lists.every(Array.isArray)) return null;
  return record as PackageRecord;
}

/**
 * The package the rehearsal left for this work tree, verified against what the drain would produce
 * now: same HEAD, same bytes of the user's index, same allow list and scanner, the index file the one
 * the record hashed, and the local ref still at the commit of the recorded tree. Anything else — no
 * package, a crashed rehearsal's leftovers, a moved HEAD — is `{reason}`, and the drain takes its full path.
 */
export async function openLocalPackage(root: string, stateDir: string, repository: HeadAndIndex, scanner: string): Promise<OpenedPackage | NoPackage> {
  const dir = join(stateDir, 'rehearsal');
  const text = await readFile(packageFile(dir, root), 'utf8').catch(() => null);
  if (text === null) return { reason: 'no rehearsal package' };
  let record: PackageRecord | null;
  try {
    record = recordOf(JSON.parse(text));
  } catch {
    record = null;
  }
  if (record === null || record.root !== root) return { reason: 'the rehearsal package is unreadable' };
  if (record.head !== repository.head) return { reason: 'HEAD moved since the rehearsal' };
  if (record.scanner !== scanner) return { reason: 'the secret scanner changed since the rehearsal' };
  const [userIndex, allow] = await Promise.all([userIndexKey(root), allowKey(root)]);
  if (record.user_index !== userIndex) return { reason: 'the index changed since the rehearsal' };
  if (record.allow !== allow) return { reason: 'the secret allow list changed since the rehearsal' };
  const scratch = await mkdtemp(join(tmpdir(), 'handoff-rehearsed-'));
  const dispose = () => rm(scratch, { recursive: true, force: true });
  try {
    const index = join(scratch, 'index');
    const source = await stat(record.index_file);
    await copyFile(record.index_file, index);
    await utimes(index, source.atime, source.mtime);
    if ((await fileSha(index)) !== record.index_sha256) throw new Error('the package index is not the one recorded');
    const commit = await currentRef(root, rehearsalRef(root));
    const tree =
      commit === record.commit ? (await runGit(['rev-parse', '--verify', '--end-of-options', `${commit}^{tree}`], { cwd: root })).stdout.trim() : null;
    if (tree !== record.tree) throw new Error('the rehearsal ref does not hold the recorded snapshot');
    const env = { GIT_INDEX_FILE: index };
    const options = { cwd: root, env, timeoutMs: GIT_TIMEOUT_MS };
    // Stat data first, content where git cannot trust it (racily clean entries): git's own test of a change.
    const [modified, added] = await Promise.all([
      git(['diff-files', '-z', '--name-only', '--ignore-submodules=all', '--', '.', OWN_FILES_EXCLUDE], options),
      git(['ls-files', '-z', '--others', '--exclude-standard', '--', '.', OWN_FILES_EXCLUDE], options),
    ]);
    const since = new Set([...modified.split('\0'), ...added.split('\0')].filter(Boolean));
    const kept = record;
    return {
      index,
      since: [...since],
      created_at: kept.created_at,
      tree: kept.tree,
      dispose,
      carry(fresh, seen) {
        const unchanged = (path: string) => !since.has(path);
        const pairs = kept.withhold.map((path, i) => [path, kept.withheld[i]] as const).filter(([path]) => unchanged(path));
        for (const [path, ids] of kept.seen) if (unchanged(path) && !seen.has(path)) seen.set(path, ids);
        return {
          ...fresh,
          withheld: [...pairs.flatMap(([, file]) => (file === undefined ? [] : [file])), ...fresh.withheld],
          withhold: [...pairs.map(([path]) => path), ...fresh.withhold],
          allowed: [...kept.allowed.filter(unchanged), ...fresh.allowed],
          unscanned: [...kept.unscanned.filter((file) => unchanged(file.path)), ...fresh.unscanned],
        };
      },
    };
  } catch (error) {
    await dispose();
    return { reason: `the rehearsal package does not match: ${(error as Error).message}`.slice(0, 300) };
  }
}
