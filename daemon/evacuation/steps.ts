import {
  buildManifest,
  HandoffError,
  leaseRef,
  packageFiles,
  packagesRef,
  renderHandoff,
  serializeManifest,
  type CapsuleQuality,
  type Cycle,
  type DrainProgress,
  type DrainStep,
  type RemoteTracking,
  type StepRecord,
  type WorkspaceContext,
} from '../../protocol/index.js';
import {
  ManifestSchema,
  type Capsule,
  type Checkpoint,
  type Manifest,
  type RepositoryObservation,
  type SecretScanRecord,
  type Validation,
  type Withheld,
} from '../../schemas/index.js';
import type { Config, StepProgress } from '../../schemas/index.js';
import { readCapsule } from '../capsule/capsule-file.js';
import { capsuleQuality } from '../capsule/quality.js';
import type { Clock, Monotonic } from '../clock.js';
import { currentRef, headAndIndex, inspectRepository, publishRefs, publishRoute, snapshotWorkTree, treeOfWorkTree, type HeadAndIndex } from '../git/index.js';
import type { NoPackage, OpenedPackage } from '../rehearsal/local-package.js';
import { precompiled } from '../precompiled.js';
import { describeErrors } from '../schema-check.js';
import { recordOrigin } from '../prune/cycle-ledger.js';
import { sha256, writePackage } from './package-writer.js';
import { adoptPublished, followRecords, leaseOfferRecord, packageRecord } from './remote-records.js';
import type { StepStore } from './step-store.js';
import { redactRecord } from './record-secrets.js';
import { runValidation } from './validation-command.js';
import type { SecretScan } from './secret-scan.js';
import type { VerdictCache } from './scan-verdicts.js';

/** A step either finishes with a record for the journal or asks for a new revision (work tree moved). */
export type StepOutcome =
  { readonly kind: 'done'; readonly record: StepRecord } | { readonly kind: 'revise'; readonly reason: string; readonly previousCommit: string };

export interface StepDeps {
  readonly config: Config;
  readonly clock: Clock;
  /** The validation's and the secret scan's deadlines and durations. */
  readonly monotonic: Monotonic;
  readonly store: StepStore;
  /** The secret scan's verdicts of earlier drains, opened for one scan. */
  readonly verdicts: () => Promise<VerdictCache>;
  /**
   * The package PREPARE's rehearsal left for this work tree, verified (daemon/rehearsal/local-package.ts),
   * or why there is none to start from; absent: the drain always takes its full path.
   */
  readonly rehearsed?: (root: string, repository: HeadAndIndex, scanner: string) => Promise<OpenedPackage | NoPackage>;
  /** PREPARE's validation outcome for this command while the work tree has not changed since it ran (daemon/rehearsal/validation-evidence.ts). */
  readonly rehearsedValidation?: (root: string, command: string) => Promise<Validation | null>;
  /** Test-only: runs between the secret scan and the snapshot's `add`, where an agent's write races the drain. */
  readonly afterScan?: () => Promise<void>;
}

/** The agent kept editing after the snapshot this many times: stop chasing it and say so. */
const MAX_REVISIONS = 3;

const validateManifest = precompiled<Manifest>(ManifestSchema);

/** What a drain works on: the cycle's home (where its records live) and the work tree it snapshots. */
export interface DrainTarget {
  readonly home: string;
  readonly work: string;
  readonly context: WorkspaceContext;
  readonly cycle: Cycle;
  readonly drain: DrainProgress;
  /** Where a long step has got to, for the status a CLI long-polls (`step_progress`); not journaled. */
  readonly report?: (phase: NonNullable<StepProgress['phase']>, done: number | null, total: number | null) => void;
}

export const handoffRef = (cycle: Cycle, leg: 'out' | 'return'): string => `refs/heads/handoff/${cycle.id}${leg === 'return' ? '-return' : ''}`;

function recordOf(deps: StepDeps, sha: string | null, summary: StepRecord['summary']): StepOutcome {
  return { kind: 'done', record: { at: new Date(deps.clock.now()).toISOString(), sha256: sha, summary } };
}

function required<T>(value: T | undefined | null, what: string): T {
  if (value === undefined || value === null)
    throw new HandoffError('corrupt_record', `the journal lacks ${what} for this drain`, 'inspect the journal; the drain cannot continue without it');
  return value;
}

const stringField = (value: unknown): string | null => (typeof value === 'string' ? value : null);
/** A step record's name in the store: one per step, leg and drain revision. */
const recordName = (target: DrainTarget, what: string) => `${what}-${target.drain.leg}-r${target.drain.revision}`;

/** The snapshot's scratch index, kept beside the step records until the offer's re-check. */
const snapshotIndex = (target: DrainTarget) => `${recordName(target, 'snapshot')}.index`;

/** The checkpoint the package step decided on (its mechanism, ref, commit and remote). */
function checkpointOf(drain: DrainProgress): Checkpoint {
  const snapshot = required(drain.steps.snapshot, 'the snapshot');
  const packaged = required(drain.steps.package, 'the package');
  const mechanism = required(stringField(packaged.summary['mechanism']), 'the mechanism') as Checkpoint['mechanism'];
  return {
    mechanism,
    ref: stringField(packaged.summary['ref']),
    commit: stringField(packaged.summary['commit']),
    tree: stringField(snapshot.summary['tree']),
    remote: stringField(packaged.summary['remote']),
    // Claimed by the manifest, made true by the publish step's read-back before the lease is offered.
    remote_verified: mechanism === 'handoff_branch',
    created_at: snapshot.at,
  };
}

/** The remote the records travel to: the one the checkpoint branch goes to; none for a local ref. */
function travellingRemote(drain: DrainProgress): string | null {
  const packaged = drain.steps.package;
  return packaged?.summary['mechanism'] === 'handoff_branch' ? stringField(packaged.summary['remote']) : null;
}

/**
 * The fallback ladder (docs/concepts.md): the remote handoff branch; without a remote, the local ref
 * (this machine only); the capsule alone only when the source did not change.
 */
async function decideCheckpoint(target: DrainTarget, observed: RepositoryObservation): Promise<Pick<Checkpoint, 'mechanism' | 'ref' | 'commit' | 'remote'>> {
  const snapshot = required(target.drain.steps.snapshot, 'the snapshot');
  const commit = required(stringField(snapshot.summary['commit']), 'the snapshot commit');
  const ref = required(stringField(snapshot.summary['ref']), 'the snapshot ref');
  // A configured remote is where the work goes; if it fails, that is a blocked reason, never silently a local ref.
  if (observed.remote !== null) return { mechanism: 'handoff_branch', ref, commit, remote: observed.remote };
  if ((await currentRef(target.work, ref)) === commit) return { mechanism: 'local_ref', ref, commit, remote: target.work };
  const clean = observed.dirty.staged.length + observed.dirty.unstaged.length + observed.dirty.untracked.length === 0;
  if (clean && observed.head !== null) return { mechanism: 'capsule_only', ref: null, commit: observed.head, remote: target.work };
  throw new HandoffError(
    'drain_blocked',
    `the local ref ${ref} does not hold ${commit} and the work tree has changes`,
    'nothing is recoverable yet; run `handoff resume`',
  );
}

/** Where the lease now travels, from the offer step: the remote name and the chain's head. */
export function remoteTracking(drain: DrainProgress): RemoteTracking | null {
  const offer = drain.steps.offer;
  const name = stringField(offer?.summary['remote']);
  return name === null ? null : { name, lease_head: stringField(offer?.summary['lease_head']) };
}

export function verifiedCheckpoint(drain: DrainProgress) {
  const checkpoint = checkpointOf(drain);
  return { mechanism: checkpoint.mechanism, ref: checkpoint.ref, commit: checkpoint.commit, verified: true };
}

interface ScanOutcome {
  readonly withheld: readonly Withheld[];
  /** The withheld files' own paths, which the snapshot left out. */
  readonly withhold: readonly string[];
  readonly secretScan: SecretScanRecord | undefined;
}

/**
 * What the snapshot step's secret scan decided (nothing for a journal written before the scan
 * existed; the withheld paths as they are and no `secret_scan` for one written before those were kept).
 */
async function scanOf(store: StepStore, target: DrainTarget): Promise<ScanOutcome> {
  const snapshot = required(target.drain.steps.snapshot, 'the snapshot');
  if (snapshot.sha256 === null) return { withheld: [], withhold: [], secretScan: undefined };
  const scan = await store.load<Partial<SecretScan> & { withheld: Withheld[] }>(target.cycle.id, recordName(target, 'secrets'), snapshot.sha256);
  return {
    withheld: scan.withheld,
    withhold: scan.withhold ?? scan.withheld.map((file) => file.path),
    secretScan:
      scan.allow_list === undefined ? undefined : { allow_list: scan.allow_list, allowed: [...(scan.allowed ?? [])], unscanned: [...(scan.unscanned ?? [])] },
  };
}

const pathLines = (paths: readonly string[]): string => paths.join('\n').slice(0, 2000);

/**
 * The changes inspect's `git status` listed against this HEAD, so the scan does not walk the work tree
 * again; null when HEAD moved since (or is unborn) and the scan lists them itself. A file changed after
 * that listing is staged as git reads it, and the staged audit scans those bytes before anything is written.
 */
async function inspectedChanges(store: StepStore, target: DrainTarget, head: string | null): Promise<readonly string[] | null> {
  const observed = await store.load<RepositoryObservation>(target.cycle.id, recordName(target, 'inspect'), target.drain.steps.inspect?.sha256 ?? null);
  if (head === null || observed.head !== head) return null;
  return [...new Set([...observed.dirty.staged, ...observed.dirty.unstaged, ...observed.dirty.untracked])];
}

/** Each drain step: effects here, decisions in protocol/, results back to the journal. */
export function createSteps(deps: StepDeps): Record<DrainStep, (target: DrainTarget) => Promise<StepOutcome>> {
  const { store, config } = deps;
  const gitTimeout = config.git_timeout_seconds * 1000;

  /**
   * A new revision when the work tree moved since the snapshot (the withheld files left out, as the
   * snapshot did). From the snapshot's own index when it was kept: `add -A` gives the same tree from
   * any index, but from that one it re-hashes only files whose stat data moved since the snapshot.
   */
  async function treeMoved(target: DrainTarget): Promise<StepOutcome | null> {
    const snapshot = required(target.drain.steps.snapshot, 'the snapshot');
    const keptIndex = snapshotIndex(target);
    const from = await store.kept(target.cycle.id, keptIndex);
    const tree = await treeOfWorkTree(target.work, (await scanOf(store, target)).withhold, from ?? undefined);
    await store.drop(target.cycle.id, keptIndex);
    if (tree === snapshot.summary['tree']) return null;
    if (target.drain.revision >= MAX_REVISIONS) {
      throw new HandoffError(
        'drain_blocked',
        `the work tree changed after ${MAX_REVISIONS} snapshots`,
        'the source agent must stop editing (finish its atomic step), then run `handoff resume`',
      );
    }
    return {
      kind: 'revise',
      reason: 'the work tree changed after the snapshot',
      previousCommit: required(stringField(snapshot.summary['commit']), 'the snapshot commit'),
    };
  }

  return {
    async inspect(target) {
      if (target.drain.leg === 'out') await recordOrigin(store, target.cycle.id, target.home);
      const observed = await inspectRepository(target.work);
      const sha = await store.save(target.cycle.id, recordName(target, 'inspect'), observed);
      const dirty = observed.dirty.staged.length + observed.dirty.unstaged.length + observed.dirty.untracked.length;
      return recordOf(deps, sha, {
        remote: observed.remote,
        root_commit: observed.root_commit,
        branch: observed.branch,
        head: observed.head,
        dirty,
        operation: observed.operation_in_progress,
      });
    },

    async validate(target) {
      const { command } = config.validation;
      // `rehearsal.validate: reuse`: PREPARE's outcome stands while the work tree has not changed since it ran.
      const standing = config.rehearsal.validate === 'reuse' && command !== null ? ((await deps.rehearsedValidation?.(target.work, command)) ?? null) : null;
      const ranAt = new Date(deps.clock.now()).toISOString();
      const result: Validation =
        standing ??
        (command === null
          ? await runValidation(target.work, command, 0, () => deps.monotonic.now())
          : {
              ...(await runValidation(target.work, command, config.validation.timeout_seconds * 1000, () => deps.monotonic.now())),
              ran_in: 'evacuation',
              ran_at: ranAt,
            });
      const sha = await store.save(target.cycle.id, `validate-${target.drain.leg}`, [result]);
      return recordOf(deps, sha, { status: result.status, ran_in: result.ran_in ?? 'evacuation' });
    },

    async snapshot(target) {
      const { cycle, drain } = target;
      const ref = handoffRef(cycle, drain.leg);
      // Before anything is written: a file holding a secret never reaches the snapshot (docs/security.md#secrets).
      // Loaded here, at its first use: secretlint is the largest part of the daemon an idle one never runs.
      const { scanForSecrets, secretlintFingerprint } = await import('./secret-scan.js');
      const { auditStaged } = await import('./staged-audit.js');
      const verdicts = await deps.verdicts();
      const seen = new Map<string, readonly string[]>();
      // Read once, with the index's path: the scan lists the changes against this HEAD, the snapshot
      // commits on it (one git process where there were three).
      const repository = await headAndIndex(target.work);
      // PREPARE's package, when it still matches: only what changed since is scanned and hashed. Every
      // staged entry still passes the audit below against the bytes some scan read, so nothing unscanned goes out.
      const opened = deps.rehearsed === undefined ? { reason: 'no rehearsal package' } : await deps.rehearsed(target.work, repository, secretlintFingerprint());
      const rehearsed = 'index' in opened ? opened : null;
      const notReused = 'reason' in opened ? opened.reason : null;
      const paths = rehearsed === null ? await inspectedChanges(store, target, repository.head) : rehearsed.since;
      let scan: SecretScan;
      let result;
      try {
        try {
          scan = await scanForSecrets(target.work, {
            timeoutMs: config.secret_scan.timeout_ms,
            maxFileBytes: config.secret_scan.max_file_bytes,
            now: () => deps.monotonic.now(),
            onProgress: (done, total) => target.report?.('secret scan', done, total),
            verdicts,
            seen,
            head: repository.head,
            ...(paths === null ? {} : { paths }),
          });
          if (rehearsed !== null) scan = rehearsed.carry(scan, seen);
        } finally {
          // Also after a scan past its budget: `handoff resume` then scans only the files it did not reach.
          await verdicts.save();
        }
        await deps.afterScan?.();
        target.report?.('snapshot commit', null, null);
        result = await snapshotWorkTree(target.work, {
          ref,
          message: `handoff ${cycle.id}: snapshot of the work tree (${drain.leg} leg, revision ${drain.revision})`,
          createdAt: required(drain.revision_at, 'the revision time'),
          expectedOld: drain.previous_commit,
          withhold: scan.withhold,
          // From the package's index, git re-hashes only the files whose stat data moved since the rehearsal.
          repository: rehearsed === null ? repository : { head: repository.head, index: rehearsed.index },
          keepIndexAt: await store.path(cycle.id, snapshotIndex(target)),
          // A file written after the scan is in the index as git read it: proven to be the scanned bytes, or scanned now.
          audit: async (entries, head) => {
            const first = scan;
            scan = await auditStaged(target.work, entries, first, { head, maxFileBytes: config.secret_scan.max_file_bytes, seen });
            return scan.withhold.slice(first.withhold.length);
          },
        });
      } finally {
        await rehearsed?.dispose();
      }
      const fromRehearsal: Record<string, number | string> =
        rehearsed === null ? { rehearsal: notReused ?? 'no rehearsal package' } : { rehearsal: 'reused', changed_since_rehearsal: rehearsed.since.length };
      // Saved after the audit, so the journal (and the offer's re-check) know every file withheld.
      const scanSha = await store.save(cycle.id, recordName(target, 'secrets'), scan);
      // Files git would not add (a failing required filter, an unreadable file) are named, not fatal.
      const refused: Record<string, number | string> =
        result.refused.length === 0 ? {} : { refused: result.refused.length, refused_paths: result.refused.join('\n').slice(0, 2000) };
      // Withheld, allowed and unscanned files are named here, so the journal and `handoff status` say which.
      const named = (key: string, paths: readonly string[]): Record<string, string> => (paths.length === 0 ? {} : { [key]: pathLines(paths) });
      const secrets = {
        withheld: scan.withheld.length,
        allowed_secrets: scan.allowed.length,
        scanned: scan.scanned,
        scan_cached: scan.cached ?? 0,
        unscanned: scan.unscanned.length,
        allow_list: scan.allow_list,
        ...named(
          'withheld_paths',
          scan.withheld.map((file) => `${file.path} (${file.rule})`),
        ),
        ...named('allowed_paths', scan.allowed),
        ...named(
          'unscanned_paths',
          scan.unscanned.map((file) => `${file.path} (${file.why})`),
        ),
      };
      return recordOf(deps, scanSha, {
        ref: result.ref,
        commit: result.commit,
        tree: result.tree,
        parent: result.parent,
        ...refused,
        ...secrets,
        ...fromRehearsal,
      });
    },

    async package(target) {
      const { cycle, drain, context } = target;
      const files = packageFiles(drain.leg, drain.revision);
      // The capsule and the package time are frozen for this revision the first time, so a resumed
      // package has the same bytes (the files are written create-once).
      const inputName = recordName(target, 'package-input');
      let input: { capsule: Capsule | null; quality: CapsuleQuality; created_at: string };
      const saved = await store.find<typeof input>(cycle.id, inputName);
      if (saved !== null && typeof saved.created_at === 'string') {
        input = saved;
      } else {
        const { capsule } = await readCapsule(target.work);
        input = { capsule, quality: await capsuleQuality(target.work, capsule, context), created_at: new Date(deps.clock.now()).toISOString() };
        await store.save(cycle.id, inputName, input);
      }
      const repository = await store.load<RepositoryObservation>(cycle.id, recordName(target, 'inspect'), drain.steps.inspect?.sha256 ?? null);
      const validations = await store.load<Validation[]>(cycle.id, `validate-${drain.leg}`, drain.steps.validate?.sha256 ?? null);
      const decided = await decideCheckpoint(target, repository);
      const snapshot = required(drain.steps.snapshot, 'the snapshot');
      const scanned = await scanOf(store, target);
      // Every string the manifest and HANDOFF.md carry passes the secret scan before anything is
      // hashed or written: a hit becomes the marker naming its rule, so a resumed drain writes the same bytes.
      const { value: manifest } = await redactRecord(
        buildManifest({
          cycle,
          leg: drain.leg,
          revision: drain.revision,
          createdAt: input.created_at,
          // The return leg chains to the out leg's last revision.
          predecessor: drain.manifests.at(-1) ?? cycle.drain.manifests.at(-1) ?? null,
          source: context.lease.holder?.executor ?? null,
          capsule: input.capsule,
          quality: input.quality,
          repository,
          validations,
          // Claimed verified on the remote; the publish step proves it before the lease is offered.
          checkpoint: {
            ...decided,
            tree: stringField(snapshot.summary['tree']),
            remote_verified: decided.mechanism === 'handoff_branch',
            created_at: snapshot.at,
          },
          withheld: scanned.withheld,
          ...(scanned.secretScan === undefined ? {} : { secretScan: scanned.secretScan }),
        }),
      );
      const handoff = renderHandoff(manifest);
      const complete: Manifest = { ...manifest, integrity: { artifacts: [{ path: files.handoff, sha256: sha256(handoff) }] } };
      if (!validateManifest(structuredClone(complete))) {
        // Nothing was written: the next attempt reads the capsule again rather than fail the same way.
        await store.forget(cycle.id, inputName);
        throw new HandoffError(
          'internal_error',
          `the manifest would not validate: ${describeErrors(validateManifest.errors, 'manifest')}`,
          'this is a bug; the package was not written. Fix the capsule if it is named, then `handoff resume` reads it again',
        );
      }
      const text = serializeManifest(complete);
      await writePackage(target.home, cycle.id, files, text, handoff);
      // With a remote, the package travels too (a receiver elsewhere needs only a clone): its record is
      // made here, locally, and goes out with the checkpoint in the publish step's one push.
      let records: string | null = null;
      if (decided.mechanism === 'handoff_branch' && decided.remote !== null) {
        if (drain.leg === 'return') await followRecords(target.work, decided.remote, cycle.id, cycle.remote?.lease_head ?? null, gitTimeout);
        records = await packageRecord(target.work, target.home, cycle.id, complete.created_at);
      }
      return recordOf(deps, sha256(text), {
        manifest: files.manifest,
        handoff: files.handoff,
        capsule: input.capsule === null ? 'missing' : 'agent',
        ...decided,
        records,
      });
    },

    async publish(target) {
      const { cycle, drain, work } = target;
      const checkpoint = checkpointOf(drain);
      const remote = travellingRemote(drain);
      if (remote === null || checkpoint.ref === null || checkpoint.commit === null) {
        return recordOf(deps, null, { mechanism: checkpoint.mechanism, remote: null, remote_verified: false, pushed: false });
      }
      const packaged = required(drain.steps.package, 'the package');
      const { lease } = target.context;
      const manifest = {
        path: required(stringField(packaged.summary['manifest']), 'the manifest path'),
        sha256: required(packaged.sha256, 'the manifest sha256'),
      };
      // The offer's record is made while the remote's URL is read and the LFS content goes out: neither
      // needs the other. Both settle before the step goes on or fails, so nothing of it outlives the step.
      const [offerMade, routeFound] = await Promise.allSettled([
        leaseOfferRecord(work, {
          leg: drain.leg,
          cycle: cycle.id,
          manifest,
          lastToken: lease.last_token,
          holder: lease.holder === null ? null : { executor: lease.holder.executor, token: lease.holder.token },
          token: cycle.receiver?.token ?? null,
          // The package's time: a resumed drain makes the same record, and the push finds it there.
          at: required(drain.steps.package, 'the package').at,
        }),
        publishRoute(work, remote, checkpoint.commit, gitTimeout),
      ]);
      if (offerMade.status === 'rejected') throw offerMade.reason;
      if (routeFound.status === 'rejected') throw routeFound.reason;
      const leaseHead = offerMade.value;
      const records = [
        { ref: packagesRef(cycle.id), commit: required(stringField(packaged.summary['records']), 'the package record') },
        { ref: leaseRef(cycle.id), commit: leaseHead },
      ];
      const checkpointRef = { ref: checkpoint.ref, commit: checkpoint.commit };
      const result = await publishRefs(work, { route: routeFound.value, checkpoint: checkpointRef, records, timeoutMs: gitTimeout });
      await adoptPublished(work, records);
      return recordOf(deps, null, {
        mechanism: checkpoint.mechanism,
        remote,
        remote_verified: result.verified,
        pushed: result.pushed,
        lfs_objects: result.lfsObjects,
        lease_head: leaseHead,
      });
    },

    async offer(target) {
      const snapshot = required(target.drain.steps.snapshot, 'the snapshot');
      const published = required(target.drain.steps.publish, 'the publish result');
      // An edit after the snapshot (even one made while the push ran) makes a new revision, whose
      // publish moves the branch, the package and the offer on together; this one is not offered here.
      const moved = await treeMoved(target);
      if (moved !== null) return moved;
      return recordOf(deps, null, {
        tree: stringField(snapshot.summary['tree']),
        remote: stringField(published.summary['remote']),
        lease_head: stringField(published.summary['lease_head']),
      });
    },
  };
}
