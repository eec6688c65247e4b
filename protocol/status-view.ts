import type { Reading } from '../schemas/telemetry.schema.js';
import { assess, countsForPressure, credibility, uncountedFamilyMessage } from './pressure-policy.js';
import type { PauseInfo } from './workspace-events.js';
import { nextSteps, situationOf, type NextStep, type Situation } from './ways-out.js';
import type { WorkspaceState } from './workspace-machine.js';
import { stateOf, type WorkspaceSnapshot } from './workspace-step.js';

export interface ReadingView extends Reading {
  readonly age_seconds: number;
  readonly credible: boolean;
  /** Why a recorded reading no longer counts (it went stale, its window reset), or null. */
  readonly not_credible: string | null;
}

export interface StatusView {
  readonly workspace: string;
  readonly state: WorkspaceState;
  readonly stage_since: string;
  readonly pressure: { readonly percent: number; readonly metric: string; readonly source: string } | null;
  readonly thresholds: { readonly prepare_percent: number; readonly evacuate_percent: number; readonly hysteresis_percent: number };
  readonly readings: readonly ReadingView[];
  readonly warnings: WorkspaceSnapshot['context']['warnings'];
  readonly paused: (PauseInfo & { readonly scope: 'global' | 'workspace' }) | null;
  readonly blocked: string | null;
  readonly cycle: WorkspaceSnapshot['context']['cycle'];
  readonly lease: WorkspaceSnapshot['context']['lease'];
  readonly capsule: WorkspaceSnapshot['context']['capsule'];
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
    pressure: worst === null || worst.used_percent === null ? null : { percent: worst.used_percent, metric: worst.metric, source: worst.source },
    thresholds: { prepare_percent, evacuate_percent, hysteresis_percent },
    readings: views,
    warnings: context.warnings.slice(-5),
    paused: pause,
    blocked: context.blocked,
    cycle: context.cycle,
    lease: context.lease,
    capsule: context.capsule,
    situation: situationOf(ways),
    next: nextSteps(ways),
  };
}
