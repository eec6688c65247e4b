import {
  buildManifest,
  HandoffError,
  packageFiles,
  renderHandoff,
  serializeManifest,
  type Cycle,
  type DrainStep,
  type StepRecord,
  type WorkspaceContext,
} from '../../protocol/index.js';
import { ManifestSchema, type Capsule, type Checkpoint, type Manifest, type RepositoryObservation, type Validation } from '../../schemas/index.js';
import type { Config } from '../../schemas/index.js';
import { readCapsule } from '../capsule/capsule-file.js';
import type { Clock } from '../clock.js';
import { currentRef, inspectRepository, publishRef, snapshotWorkTree, workTreeTree } from '../git/index.js';
import { createAjv, describeErrors } from '../validation.js';
import { sha256, writePackage } from './package-writer.js';
import type { StepStore } from './step-store.js';
import { runValidation } from './validate.js';

/** A step either finishes with a record for the journal or asks for a new revision (work tree moved). */
export type StepOutcome = { readonly kind: 'done'; readonly record: StepRecord } | { readonly kind: 'revise'; readonly reason: string; readonly previousCommit: string };

export interface StepDeps {
  readonly config: Config;
  readonly clock: Clock;
  readonly store: StepStore;
}

/** The agent kept editing after the snapshot this many times: stop chasing it and say so. */
const MAX_REVISIONS = 3;

const validateManifest = createAjv().compile<Manifest>(ManifestSchema);

export const handoffRef = (cycle: Cycle): string => `refs/heads/handoff/${cycle.id}${cycle.drain.leg === 'return' ? '-return' : ''}`;

function recordOf(deps: StepDeps, sha: string | null, summary: StepRecord['summary']): StepOutcome {
  return { kind: 'done', record: { at: new Date(deps.clock.now()).toISOString(), sha256: sha, summary } };
}

function need<T>(value: T | undefined | null, what: string): T {
  if (value === undefined || value === null) throw new HandoffError('corrupt_record', `the journal lacks ${what} for this drain`, 'inspect the journal; the drain cannot continue without it');
  return value;
}

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const name = (cycle: Cycle, what: string) => `${what}-${cycle.drain.leg}-r${cycle.drain.revision}`;

function checkpointOf(cycle: Cycle): Checkpoint {
  const snapshot = need(cycle.drain.steps.snapshot, 'the snapshot');
  const publish = need(cycle.drain.steps.publish, 'the publish result');
  return {
    mechanism: need(str(publish.summary['mechanism']), 'the mechanism') as Checkpoint['mechanism'],
    ref: str(publish.summary['ref']),
    commit: str(publish.summary['commit']),
    tree: str(snapshot.summary['tree']),
    remote: str(publish.summary['remote']),
    remote_verified: publish.summary['remote_verified'] === true,
    created_at: snapshot.at,
  };
}

export function verifiedCheckpoint(cycle: Cycle) {
  const checkpoint = checkpointOf(cycle);
  return { mechanism: checkpoint.mechanism, ref: checkpoint.ref, commit: checkpoint.commit, verified: true };
}

/** Each drain step: effects here, decisions in protocol/, results back to the journal. */
export function createSteps(deps: StepDeps): Record<DrainStep, (root: string, context: WorkspaceContext, cycle: Cycle) => Promise<StepOutcome>> {
  const { store, config } = deps;
  const gitTimeout = config.git_timeout_seconds * 1000;
  return {
    async inspect(root, _context, cycle) {
      const observed = await inspectRepository(root);
      const sha = await store.save(cycle.id, name(cycle, 'inspect'), observed);
      const dirty = observed.dirty.staged.length + observed.dirty.unstaged.length + observed.dirty.untracked.length;
      return recordOf(deps, sha, { remote: observed.remote, branch: observed.branch, head: observed.head, dirty, operation: observed.operation_in_progress });
    },

    async validate(root, _context, cycle) {
      const result = await runValidation(root, config.validation.command, config.validation.timeout_seconds * 1000, () => deps.clock.now());
      const sha = await store.save(cycle.id, `validate-${cycle.drain.leg}`, [result]);
      return recordOf(deps, sha, { status: result.status });
    },

    async snapshot(root, _context, cycle) {
      const ref = handoffRef(cycle);
      const result = await snapshotWorkTree(root, {
        ref,
        message: `handoff ${cycle.id}: snapshot of the work tree (${cycle.drain.leg} leg, revision ${cycle.drain.revision})`,
        createdAt: need(cycle.drain.revision_at, 'the revision time'),
        expectedOld: cycle.drain.previous_commit,
      });
      return recordOf(deps, null, { ref: result.ref, commit: result.commit, tree: result.tree, parent: result.parent });
    },

    async publish(root, _context, cycle) {
      const snapshot = need(cycle.drain.steps.snapshot, 'the snapshot');
      const commit = need(str(snapshot.summary['commit']), 'the snapshot commit');
      const ref = need(str(snapshot.summary['ref']), 'the snapshot ref');
      const observed = await store.load<RepositoryObservation>(cycle.id, name(cycle, 'inspect'), cycle.drain.steps.inspect?.sha256 ?? null);
      if (observed.remote !== null) {
        // A configured remote that fails is a blocked reason, never silently a local ref.
        const pushed = await publishRef(root, { remote: observed.remote, commit, ref, timeoutMs: gitTimeout });
        return recordOf(deps, null, { mechanism: 'handoff_branch', ref, commit, remote: observed.remote, remote_verified: pushed.verified, pushed: pushed.pushed });
      }
      if ((await currentRef(root, ref)) === commit) {
        return recordOf(deps, null, { mechanism: 'local_ref', ref, commit, remote: root, remote_verified: false, pushed: false });
      }
      const clean = observed.dirty.staged.length + observed.dirty.unstaged.length + observed.dirty.untracked.length === 0;
      if (clean && observed.head !== null) {
        return recordOf(deps, null, { mechanism: 'capsule_only', ref: null, commit: observed.head, remote: root, remote_verified: false, pushed: false });
      }
      throw new HandoffError('drain_blocked', `the local ref ${ref} does not hold ${commit} and the work tree has changes`, 'nothing is recoverable yet; run `handoff resume`');
    },

    async package(root, context, cycle) {
      const files = packageFiles(cycle.drain.leg, cycle.drain.revision);
      // The capsule is frozen for this revision the first time, so a resumed package has the same bytes.
      const inputName = name(cycle, 'package-input');
      let input: { capsule: Capsule | null };
      try {
        input = await store.load(cycle.id, inputName, null);
      } catch {
        input = { capsule: (await readCapsule(root)).capsule };
        await store.save(cycle.id, inputName, input);
      }
      const repository = await store.load<RepositoryObservation>(cycle.id, name(cycle, 'inspect'), cycle.drain.steps.inspect?.sha256 ?? null);
      const validations = await store.load<Validation[]>(cycle.id, `validate-${cycle.drain.leg}`, cycle.drain.steps.validate?.sha256 ?? null);
      const manifest = buildManifest({
        cycle,
        leg: cycle.drain.leg,
        revision: cycle.drain.revision,
        createdAt: need(cycle.drain.steps.publish, 'the publish result').at,
        predecessor: cycle.drain.manifests.at(-1) ?? null,
        source: context.lease.holder?.executor ?? null,
        capsule: input.capsule,
        repository,
        validations,
        checkpoint: checkpointOf(cycle),
      });
      const handoff = renderHandoff(manifest);
      const complete: Manifest = { ...manifest, integrity: { artifacts: [{ path: files.handoff, sha256: sha256(handoff) }] } };
      if (!validateManifest(structuredClone(complete))) {
        throw new HandoffError('internal_error', `the manifest would not validate: ${describeErrors(validateManifest.errors, 'manifest')}`, 'this is a bug; the package was not written');
      }
      const text = serializeManifest(complete);
      await writePackage(root, cycle.id, files, text, handoff);
      return recordOf(deps, sha256(text), { manifest: files.manifest, handoff: files.handoff, capsule: input.capsule === null ? 'missing' : 'agent' });
    },

    async offer(root, _context, cycle) {
      const snapshot = need(cycle.drain.steps.snapshot, 'the snapshot');
      const tree = await workTreeTree(root);
      if (tree === snapshot.summary['tree']) return recordOf(deps, null, { tree });
      if (cycle.drain.revision >= MAX_REVISIONS) {
        throw new HandoffError('drain_blocked', `the work tree changed after ${MAX_REVISIONS} snapshots`, 'the source agent must stop editing (finish its atomic step), then run `handoff resume`');
      }
      return { kind: 'revise', reason: 'the work tree changed after the snapshot', previousCommit: need(str(snapshot.summary['commit']), 'the snapshot commit') };
    },
  };
}
