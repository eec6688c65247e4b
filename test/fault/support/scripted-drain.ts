import { createHash } from 'node:crypto';
import {
  buildManifest,
  DRAIN_STEPS,
  drainKey,
  nextDrainAction,
  packageFiles,
  renderHandoff,
  scoreCapsule,
  serializeManifest,
  stateOf,
  type DrainProgress,
  type DrainStep,
  type Outcome,
  type StepRecord,
} from '../../../protocol/index.js';
import type { Manifest, RepositoryObservation } from '../../../schemas/index.js';
import type { Clock } from '../../../daemon/clock.js';
import { writePackage } from '../../../daemon/evacuation/package-writer.js';
import { inspectRepository } from '../../../daemon/git/index.js';
import type { WorkspaceRegistry } from '../../../daemon/workspaces/registry.js';
import { git } from '../../support/git.js';

/** Two clean clones of one repository: the source (home of the cycles) and the receiver. */
export interface Scene {
  readonly a: string;
  readonly b: string;
  readonly head: string;
  readonly tree: string;
  readonly rootCommit: string;
  readonly observed: { readonly a: RepositoryObservation; readonly b: RepositoryObservation };
}

export async function observeScene(a: string, b: string): Promise<Scene> {
  return {
    a,
    b,
    head: git(a, 'rev-parse', 'HEAD'),
    tree: git(a, 'rev-parse', 'HEAD^{tree}'),
    rootCommit: git(a, 'rev-list', '--max-parents=0', 'HEAD'),
    observed: { a: await inspectRepository(a), b: await inspectRepository(b) },
  };
}

export interface DrainScript {
  /** Block at this step instead of finishing it. */
  readonly failAt: DrainStep | null;
  /** Report the finished drain's checkpoint as not verified. */
  readonly unverified: boolean;
}

export type DrainActionResult = { readonly kind: 'none' } | { readonly kind: 'event'; readonly event: string; readonly outcome: Outcome };

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * One action of the drain runner (daemon/evacuation/drain-runner.ts) with scripted step effects: the
 * same events in the same order, the package written for real with the daemon's create-once writer,
 * and the checkpoint a clean clone can verify. The model decides when the drain moves, so restarts,
 * pauses and lease changes land between any two steps.
 */
export async function drainAction(
  registry: WorkspaceRegistry,
  clock: Clock,
  scene: Scene,
  home: string,
  script: DrainScript,
  timeoutSeconds: number,
): Promise<DrainActionResult> {
  const workspace = registry.find(home);
  if (workspace === undefined) return { kind: 'none' };
  const snapshot = workspace.snapshot();
  const { context } = snapshot;
  const cycle = context.cycle;
  const state = stateOf(snapshot);
  if (cycle === null || context.blocked !== null) return { kind: 'none' };
  let drain: DrainProgress;
  if (state === 'EVACUATE') drain = cycle.drain;
  else if (state === 'TAKEOVER' && cycle.return_drain !== null && cycle.receiver?.root != null) drain = cycle.return_drain;
  else return { kind: 'none' };
  // The model's drains always have an agent to wait for: the wait is what it exercises.
  const action = nextDrainAction(drain, clock.now(), timeoutSeconds, true);
  if (action.kind === 'wait') return { kind: 'none' };
  // Fenced like the runner's reports: each names the drain it is about.
  const fence = drainKey(cycle, drain);
  const send = async (body: Parameters<WorkspaceRegistry['dispatch']>[1]): Promise<DrainActionResult> => ({
    kind: 'event',
    event: body.type,
    outcome: (
      await registry.dispatch(
        home,
        body.type === 'DRAINED' || !('step' in body || 'why' in body || 'checkpoint' in body || 'previous_commit' in body)
          ? body
          : ({ ...body, drain: fence } as typeof body),
      )
    ).outcome,
  });
  const paused = context.paused.workspace ?? context.paused.global;
  if (paused !== null) {
    return send({
      type: 'DRAIN_BLOCKED',
      step: action.kind === 'step' ? action.step : null,
      reason: `paused before ${action.kind === 'step' ? action.step : 'finishing'}`,
    });
  }
  if (action.kind === 'waited') return send({ type: 'DRAIN_WAITED', why: action.why });
  const leg = drain.leg;
  const work = leg === 'return' ? scene.b : scene.a;
  const ref = `refs/heads/handoff/${cycle.id}${leg === 'return' ? '-return' : ''}`;
  if (action.kind === 'done') {
    const checkpoint = { mechanism: 'local_ref' as const, ref, commit: scene.head, verified: !script.unverified };
    if (leg === 'return') return send({ type: 'RETURN_READY', token: cycle.receiver?.token ?? 0, checkpoint });
    return send({ type: 'CHECKPOINT_VERIFIED', checkpoint, remote: null });
  }
  const step = action.step;
  if (script.failAt === step) return send({ type: 'DRAIN_BLOCKED', step, reason: `scripted failure at ${step}` });
  const at = new Date(clock.now()).toISOString();
  const record = (sha: string | null, summary: StepRecord['summary']): StepRecord => ({ at, sha256: sha, summary });
  let done: StepRecord;
  switch (step) {
    case 'inspect':
      done = record(null, { remote: null, root_commit: scene.rootCommit, branch: 'main', head: scene.head, dirty: 0, operation: null });
      break;
    case 'validate':
      done = record(null, { status: 'not_run' });
      break;
    case 'snapshot':
      done = record(null, { ref, commit: scene.head, tree: scene.tree, parent: scene.head });
      break;
    case 'publish':
      done = record(null, { mechanism: 'local_ref', remote: null, remote_verified: false, pushed: false });
      break;
    case 'package': {
      const files = packageFiles(leg, drain.revision);
      const manifest = buildManifest({
        cycle,
        leg,
        revision: drain.revision,
        createdAt: at,
        predecessor: drain.manifests.at(-1) ?? cycle.drain.manifests.at(-1) ?? null,
        source: context.lease.holder?.executor ?? null,
        capsule: null,
        quality: scoreCapsule(null, { existingFiles: new Set(), capsuleUpdatedAt: null, stageStartedAt: null }),
        repository: leg === 'return' ? scene.observed.b : scene.observed.a,
        validations: [{ command: null, status: 'not_run', exit_code: null, duration_ms: null, output_tail: null }],
        checkpoint: {
          mechanism: 'local_ref',
          ref,
          commit: scene.head,
          tree: scene.tree,
          remote: work,
          remote_verified: false,
          created_at: drain.steps.snapshot?.at ?? at,
        },
      });
      const handoff = renderHandoff(manifest);
      const complete: Manifest = { ...manifest, integrity: { artifacts: [{ path: files.handoff, sha256: sha256(handoff) }] } };
      const text = serializeManifest(complete);
      await writePackage(home, cycle.id, files, text, handoff);
      done = record(sha256(text), {
        manifest: files.manifest,
        handoff: files.handoff,
        capsule: 'missing',
        mechanism: 'local_ref',
        ref,
        commit: scene.head,
        remote: work,
      });
      break;
    }
    case 'offer':
      done = record(null, { tree: scene.tree, remote: null, lease_head: null });
      break;
  }
  return send({ type: 'DRAIN_STEP_DONE', step, record: done });
}

export const STEP_COUNT = DRAIN_STEPS.length;
