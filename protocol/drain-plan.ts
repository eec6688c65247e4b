import type { Manifest } from '../schemas/manifest.schema.js';

/** The drain of docs/concepts.md (The drain and the checkpoint): after the wait, these steps in this order, each journaled when done. */
export const DRAIN_STEPS = ['inspect', 'validate', 'snapshot', 'package', 'publish', 'offer'] as const;
export type DrainStep = (typeof DRAIN_STEPS)[number];

/** Small facts about a finished step; bulky results live in a file whose sha256 is kept here. */
export type StepSummary = Readonly<Record<string, string | number | boolean | null>>;

export interface StepRecord {
  readonly at: string;
  readonly sha256: string | null;
  readonly summary: StepSummary;
}

/**
 * Why the drain stopped waiting for the agent: it said `handoff drained`, the drain timeout passed, the
 * operator asked not to wait, or no agent session was seen working in the repository to wait for.
 */
export type DrainWaitReason = NonNullable<Manifest['drain_wait']>;

export interface DrainProgress {
  readonly leg: 'out' | 'return';
  /** When this leg's drain began: the drain timeout counts from here. */
  readonly started_at: string;
  /** `handoff now --no-wait`: the operator did not want to wait for `handoff drained`. */
  readonly no_wait: boolean;
  readonly drained_at: string | null;
  readonly waited: { readonly at: string; readonly why: DrainWaitReason } | null;
  /** Goes up when the work tree changed after the snapshot and the package is made again. */
  readonly revision: number;
  readonly steps: Readonly<Partial<Record<DrainStep, StepRecord>>>;
  /** sha256 of every manifest revision written in this cycle, oldest first: the predecessor chain. */
  readonly manifests: readonly string[];
  /** When the current revision began: the fixed date of its snapshot commit, so a redo is identical. */
  readonly revision_at: string | null;
  /** The previous revision's snapshot: the parent of this one's, and the value its ref must hold. */
  readonly previous_commit: string | null;
  /** When the drain last stopped (DRAIN_BLOCKED); absent in journals written before it was kept. */
  readonly blocked_at?: string;
}

export function newDrain(leg: 'out' | 'return', noWait: boolean, startedAt: string): DrainProgress {
  return {
    leg,
    started_at: startedAt,
    no_wait: noWait,
    drained_at: null,
    waited: null,
    revision: 1,
    steps: {},
    manifests: [],
    revision_at: null,
    previous_commit: null,
  };
}

/** Steps redone for a new revision: the work tree moved, so everything observed of it is redone. */
export const REVISION_STEPS: readonly DrainStep[] = ['inspect', 'snapshot', 'package', 'publish', 'offer'];

export type DrainAction =
  | { readonly kind: 'wait'; readonly untilMs: number }
  | { readonly kind: 'waited'; readonly why: DrainWaitReason }
  | { readonly kind: 'step'; readonly step: DrainStep }
  | { readonly kind: 'done' };

/**
 * What the drain does next, from what the journal says is done. A restart lands on the first
 * unfinished step and never repeats a finished one.
 */
export function nextDrainAction(drain: DrainProgress, nowMs: number, timeoutSeconds: number, agentWorking: boolean): DrainAction {
  if (drain.waited === null) {
    if (drain.no_wait) return { kind: 'waited', why: 'no_wait' };
    if (drain.drained_at !== null) return { kind: 'waited', why: 'drained' };
    // Waiting for `handoff drained` only makes sense when some agent is there to say it.
    if (!agentWorking) return { kind: 'waited', why: 'no_agent' };
    const untilMs = Date.parse(drain.started_at) + timeoutSeconds * 1000;
    return nowMs >= untilMs ? { kind: 'waited', why: 'timeout' } : { kind: 'wait', untilMs };
  }
  const step = DRAIN_STEPS.find((name) => drain.steps[name] === undefined);
  return step === undefined ? { kind: 'done' } : { kind: 'step', step };
}

/**
 * Where the drain wait ends on the monotonic clock, fixed when the daemon first sees the wait: what the
 * wall clock says is left of it, never more than the whole wait (a wall clock set back since the drain
 * started cannot stretch it); from then on a step of the wall clock changes nothing.
 */
export function drainWaitEnd(untilWallMs: number, nowWallMs: number, nowMonotonicMs: number, timeoutSeconds: number): number {
  return nowMonotonicMs + Math.min(Math.max(0, untilWallMs - nowWallMs), timeoutSeconds * 1000);
}

/**
 * Whether an agent session showed signs of work in the repository since `sinceMs`: a reading it
 * reported (status line, hook, rollout line: readings that name their session), a capsule it wrote,
 * or a hook event of a session mid-turn (a prompt submitted, a tool call finished: `lastHookMs`),
 * the surest sign of all when the readings come from provider headers, which name no session.
 * An operator's `handoff signal` names no session and is not an agent at work.
 */
export function agentSeenWorking(
  readings: Readonly<Record<string, { readonly executor: string | null; readonly observed_at: string }>>,
  capsuleUpdatedAt: string | null,
  sinceMs: number,
  lastHookMs: number | null,
): boolean {
  if (lastHookMs !== null && lastHookMs >= sinceMs) return true;
  if (capsuleUpdatedAt !== null && Date.parse(capsuleUpdatedAt) >= sinceMs) return true;
  return Object.values(readings).some((reading) => reading.executor !== null && Date.parse(reading.observed_at) >= sinceMs);
}
