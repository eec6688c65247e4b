import type { Reading } from '../schemas/telemetry.schema.js';
import { heldBack } from './held-back.js';
import type { StageMove } from './stage-move-words.js';
import type { WayOut } from '../schemas/way-out.schema.js';
import { assess, countsForPressure, credibility, uncountedFamilyMessage } from './pressure-policy.js';
import type { PauseInfo } from './workspace-events.js';
import { UNKNOWN_WAY_OUT } from './way-out.js';
import { nextSteps, situationOf, type NextStep, type Situation } from './ways-out.js';
import type { WorkspaceState } from './workspace-machine.js';
import { stateOf, type WorkspaceSnapshot } from './workspace-step.js';

export interface ReadingView extends Reading {
  readonly age_seconds: number;
  readonly credible: boolean;
  /** Why a recorded reading no longer counts (it went stale, its window reset), or null. */
  readonly not_credible: string | null;
}

/** What the current leg's secret scan decided, from its snapshot step's journal record. */
export interface SecretsView {
  /** `path (rule)`; a name that holds a secret is shown with its marker. */
  readonly withheld: readonly string[];
  readonly allowed: readonly string[];
  /** `path (why)`. */
  readonly unscanned: readonly string[];
  /** `read`, `absent`, or `ignored` (tracked or committed: the remote could have written it); null before it was recorded. */
  readonly allow_list: string | null;
}

function secretsOf(cycle: WorkspaceSnapshot['context']['cycle']): SecretsView | null {
  const summary = cycle === null ? undefined : (cycle.return_drain ?? cycle.drain).steps.snapshot?.summary;
  if (summary === undefined) return null;
  const lines = (key: string): string[] => {
    const value = summary[key];
    return typeof value === 'string' ? value.split('\n').filter(Boolean) : [];
  };
  const source = summary['allow_list'];
  return {
    withheld: lines('withheld_paths'),
    allowed: lines('allowed_paths'),
    unscanned: lines('unscanned_paths'),
    allow_list: typeof source === 'string' ? source : null,
  };
}

export interface StatusView {
  readonly workspace: string;
  readonly state: WorkspaceState;
  readonly stage_since: string;
  /** The worst credible reading; `before_cancel` when it was read before the last `handoff cancel`, so the machine no longer moves on it. */
  readonly pressure: { readonly percent: number; readonly metric: string; readonly source: string; readonly before_cancel?: boolean } | null;
  /** What the kill switch holds back: the stage the workspace would be in without it, or null. */
  readonly held_back: StageMove | null;
  readonly thresholds: { readonly prepare_percent: number; readonly evacuate_percent: number; readonly hysteresis_percent: number };
  readonly readings: readonly ReadingView[];
  readonly warnings: WorkspaceSnapshot['context']['warnings'];
  readonly paused: (PauseInfo & { readonly scope: 'global' | 'workspace' }) | null;
  readonly blocked: string | null;
  readonly cycle: WorkspaceSnapshot['context']['cycle'];
  readonly lease: WorkspaceSnapshot['context']['lease'];
  readonly capsule: WorkspaceSnapshot['context']['capsule'];
  /** The secret scan of the cycle's current leg, once its snapshot was made; null before. */
  readonly secrets: SecretsView | null;
  /** Whether the evacuation could leave from here, as the last rehearsal proved it (`unknown` before one). */
  readonly way_out: WayOut;
  /** Where the workspace stands, as docs/concepts.md's "Ways out" table names it. */
  readonly situation: Situation;
  /** The ways on, the recommended one first: what `handoff status` prints under "next". */
  readonly next: readonly NextStep[];
}

/** The status of one workspace as seen at `nowMs`: readings are re-judged, since time makes them stale. */
export function statusView(snapshot: WorkspaceSnapshot, nowMs: number): StatusView {
  const context = snapshot.context;
  const readings = Object.values(context.readings);
  const { worst } = assess(readings, nowMs, context.policy);
  const views = readings
    .map((reading): ReadingView => {
      const verdict = credibility(reading, nowMs, context.policy);
      // A per-model limit family is shown under its name but, unless configured, moves nothing.
      const counted = countsForPressure(reading, context.policy);
      return {
        ...reading,
        age_seconds: Math.max(0, Math.round((nowMs - Date.parse(reading.observed_at)) / 1000)),
        credible: verdict.credible && counted,
        not_credible: !verdict.credible ? verdict.message : counted ? null : uncountedFamilyMessage(reading),
      };
    })
    // Worst first: the operator's eye goes to the top line.
    .sort((a, b) => Number(b.credible) - Number(a.credible) || (b.used_percent ?? -1) - (a.used_percent ?? -1));
  const { paused } = context;
  const pause =
    paused.workspace !== null
      ? { ...paused.workspace, scope: 'workspace' as const }
      : paused.global !== null
        ? { ...paused.global, scope: 'global' as const }
        : null;
  const { prepare_percent, evacuate_percent, hysteresis_percent } = context.policy;
  const ways = { state: stateOf(snapshot), paused: pause, blocked: context.blocked, cycle: context.cycle, lease: context.lease, pressure: worst };
  return {
    workspace: context.root,
    state: stateOf(snapshot),
    stage_since: context.stage_since,
    pressure:
      worst === null || worst.used_percent === null
        ? null
        : {
            percent: worst.used_percent,
            metric: worst.metric,
            source: worst.source,
            before_cancel: context.cancelled_at != null && Date.parse(worst.observed_at) <= Date.parse(context.cancelled_at),
          },
    held_back: heldBack(snapshot, nowMs),
    thresholds: { prepare_percent, evacuate_percent, hysteresis_percent },
    readings: views,
    warnings: context.warnings.slice(-5),
    paused: pause,
    blocked: context.blocked,
    cycle: context.cycle,
    lease: context.lease,
    capsule: context.capsule,
    secrets: secretsOf(context.cycle),
    way_out: context.way_out ?? UNKNOWN_WAY_OUT,
    situation: situationOf(ways),
    next: nextSteps(ways),
  };
}
