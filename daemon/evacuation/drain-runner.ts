import {
  agentSeenWorking,
  drainKey,
  drainWaitEnd,
  isHandoffError,
  nextDrainAction,
  redactCredentials,
  runningDrain,
  stateOf,
  type DrainStep,
  type WorkspaceContext,
  type WorkspaceState,
} from '../../protocol/index.js';
import type { Config, StepProgress } from '../../schemas/index.js';
import type { Clock, Monotonic } from '../clock.js';
import type { Logger } from '../logger.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';
import { join } from 'node:path';
import { openLocalPackage } from '../rehearsal/local-package.js';
import { standingValidation } from '../rehearsal/validation-evidence.js';
import { openVerdictCache } from './scan-verdicts.js';
import { createStepStore } from './step-store.js';
import { createSteps, remoteTracking, verifiedCheckpoint, type DrainTarget } from './steps.js';

/** The drain a workspace is running, if any: the out leg in EVACUATE, the return leg in TAKEOVER. */
function drainTarget(home: string, state: WorkspaceState, context: WorkspaceContext): DrainTarget | null {
  const cycle = context.cycle;
  const drain = runningDrain(state, cycle);
  if (cycle === null || drain === null) return null;
  if (drain.leg === 'out') return { home, work: home, context, cycle, drain };
  // The return leg drains the receiver's checkout; a holder on another machine drains over there.
  return cycle.receiver?.root != null ? { home, work: cycle.receiver.root, context, cycle, drain } : null;
}

export interface DrainDeps {
  readonly registry: () => WorkspaceRegistry;
  readonly stateDir: string;
  readonly config: Config;
  readonly clock: Clock;
  /** Every wait and duration of the drain (the wall clock only dates what it journals). */
  readonly monotonic: Monotonic;
  readonly log: Logger;
  /** When a session's hook last showed it at work in a repository (daemon/agent-context/session-activity.ts). */
  readonly lastHookMs: (root: string) => number | null;
  /** Test-only fault point: die by SIGKILL right after this step's effect, before it is journaled. */
  readonly killAfter: DrainStep | null;
}

/**
 * Runs the drain of each evacuating workspace: one loop per workspace at a time, reading what to do
 * next from the journaled progress, so a crash resumes at the first unfinished step.
 */
export function createDrainRunner(deps: DrainDeps) {
  const { clock, monotonic, log } = deps;
  const steps = createSteps({
    config: deps.config,
    clock,
    monotonic,
    store: createStepStore(deps.stateDir),
    // The fingerprint names secretlint's versions: asked at the first scan, so an idle daemon never loads it.
    verdicts: async () => openVerdictCache(deps.stateDir, (await import('./secret-scan.js')).secretlintFingerprint()),
    rehearsed: (root, repository, scanner) => openLocalPackage(root, deps.stateDir, repository, scanner),
    rehearsedValidation: (root, command) => standingValidation(root, join(deps.stateDir, 'rehearsal'), command, deps.config.git_timeout_seconds * 1000),
  });
  const running = new Map<string, Promise<void>>();
  const again = new Set<string>();
  const timers = new Map<string, NodeJS.Timeout>();
  // Per drain (drainKey): where its wait for `handoff drained` ends on the monotonic clock.
  const waitEnds = new Map<string, number>();
  // The step in flight per workspace, for status: how far a long step got. In memory only, like a reading.
  const live = new Map<string, StepProgress>();
  // A count moves thousands of times a second; status needs it a few times a second at most.
  const REPORT_EVERY_MS = 250;

  const dispatch = (root: string, body: Parameters<WorkspaceRegistry['dispatch']>[1]) => deps.registry().dispatch(root, body);

  function schedule(root: string, atMonotonicMs: number): void {
    clearTimeout(timers.get(root));
    const timer = setTimeout(
      () => {
        timers.delete(root);
        start(root);
      },
      Math.max(0, atMonotonicMs - monotonic.now()),
    );
    timer.unref();
    timers.set(root, timer);
  }

  async function loop(root: string): Promise<void> {
    for (;;) {
      const workspace = deps.registry().find(root);
      if (workspace === undefined) return;
      const snapshot = workspace.snapshot();
      const context = snapshot.context;
      const target = drainTarget(root, stateOf(snapshot), context);
      if (target === null || context.blocked !== null) return;
      const { cycle, drain } = target;
      // Every report names the drain it is about: after `handoff cancel` a late one changes nothing.
      const fence = drainKey(cycle, drain);
      const timeoutMs = deps.config.drain_timeout_seconds * 1000;
      const since = Date.parse(drain.started_at) - timeoutMs;
      const agentWorking = agentSeenWorking(context.readings, context.capsule?.updated_at ?? null, since, deps.lastHookMs(root));
      let action = nextDrainAction(drain, clock.now(), deps.config.drain_timeout_seconds, agentWorking);
      if (action.kind === 'wait' || (action.kind === 'waited' && action.why === 'timeout')) {
        // The wall clock only dates the start; how long the wait lasts is measured on the monotonic clock.
        const untilMs = action.kind === 'wait' ? action.untilMs : clock.now();
        const end = waitEnds.get(fence) ?? drainWaitEnd(untilMs, clock.now(), monotonic.now(), deps.config.drain_timeout_seconds);
        waitEnds.set(fence, end);
        if (monotonic.now() < end) return schedule(root, end);
        action = { kind: 'waited', why: 'timeout' };
      }
      const paused = context.paused.workspace ?? context.paused.global;
      if (paused !== null) {
        const where = action.kind === 'step' ? action.step : 'finishing';
        await dispatch(root, {
          type: 'DRAIN_BLOCKED',
          drain: fence,
          step: action.kind === 'step' ? action.step : null,
          reason: `paused before ${where} (${paused.path}); after unpause run \`handoff resume\``,
        });
        return;
      }
      if (action.kind === 'waited') {
        waitEnds.delete(fence);
        await dispatch(root, { type: 'DRAIN_WAITED', drain: fence, why: action.why });
        continue;
      }
      if (action.kind === 'done') {
        const checkpoint = verifiedCheckpoint(drain);
        const remote = remoteTracking(drain);
        if (drain.leg === 'return') {
          if (remote?.lease_head) await dispatch(root, { type: 'LEASE_HEAD', lease_head: remote.lease_head });
          // The return leg is fenced by the token its holder was given at accept.
          await dispatch(root, { type: 'RETURN_READY', drain: fence, token: cycle.receiver?.token ?? 0, checkpoint });
        } else {
          await dispatch(root, { type: 'CHECKPOINT_VERIFIED', drain: fence, checkpoint, remote });
        }
        return;
      }
      const started = clock.now();
      const startedMonotonic = monotonic.now();
      log.info({ workspace: root, cycle: cycle.id, leg: drain.leg, step: action.step, revision: drain.revision }, 'drain step');
      const step = action.step;
      let reportedAt = 0;
      live.set(root, { step, started_at: new Date(started).toISOString(), phase: null, done: null, total: null, unit: null });
      const report: NonNullable<DrainTarget['report']> = (phase, done, total) => {
        const at = monotonic.now();
        if (phase === live.get(root)?.phase && at - reportedAt < REPORT_EVERY_MS) return;
        reportedAt = at;
        live.set(root, { step, started_at: new Date(started).toISOString(), phase, done, total, unit: total === null ? null : 'files' });
      };
      try {
        const outcome = await steps[action.step]({ ...target, report });
        if (deps.killAfter === action.step) process.kill(process.pid, 'SIGKILL');
        if (outcome.kind === 'revise') {
          await dispatch(root, { type: 'DRAIN_REVISION', drain: fence, reason: outcome.reason, previous_commit: outcome.previousCommit });
        } else {
          await dispatch(root, { type: 'DRAIN_STEP_DONE', drain: fence, step: action.step, record: outcome.record });
        }
        log.info({ workspace: root, step: action.step, ms: Math.round(monotonic.now() - startedMonotonic) }, 'drain step done');
      } catch (error) {
        const reason = isHandoffError(error) ? error.message : `${action.step} failed: ${redactCredentials((error as Error).message)}`;
        log.warn({ workspace: root, step: action.step, err: error }, 'drain step blocked');
        await dispatch(root, { type: 'DRAIN_BLOCKED', drain: fence, step: action.step, reason });
        return;
      } finally {
        live.delete(root);
      }
    }
  }

  /** Starts (or re-checks) the drain of a workspace; calls while it runs make it look once more. */
  function start(root: string): void {
    if (running.has(root)) {
      again.add(root);
      return;
    }
    const run = loop(root)
      .catch((error: unknown) => log.error({ err: error, workspace: root }, 'drain loop failed'))
      .finally(() => {
        running.delete(root);
        if (again.delete(root)) start(root);
      });
    running.set(root, run);
  }

  return {
    start,
    /** A step in flight, or a wait for `handoff drained` that will wake it. */
    isRunning: (root: string): boolean => running.has(root) || timers.has(root),
    /** The step in flight in this workspace and how far it got, or null between steps. */
    progress: (root: string): StepProgress | null => live.get(root) ?? null,
    /** Settles when no drain step is in flight (for shutdown). */
    async idle(): Promise<void> {
      for (const timer of timers.values()) clearTimeout(timer);
      await Promise.all(running.values());
    },
  };
}

export type DrainRunner = ReturnType<typeof createDrainRunner>;
