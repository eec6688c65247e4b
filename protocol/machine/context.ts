import type { Profile } from '../../schemas/config.schema.js';
import type { ProviderWarning, Reading } from '../../schemas/telemetry.schema.js';
import type { WayOut } from '../../schemas/way-out.schema.js';
import type { Code } from '../codes.js';
import type { DrainProgress } from '../drain-plan.js';
import type { LeaseState } from '../lease-rules.js';
import type { PressurePolicy } from '../pressure-policy.js';
import type { CapsuleState, PauseInfo, RemoteTracking, VerifiedCheckpoint } from '../workspace-events.js';

export const STATES = ['NORMAL', 'PREPARE', 'EVACUATE', 'HANDOFF_READY', 'TAKEOVER', 'RETURN_HANDOFF_READY', 'CLOSED'] as const;
export type WorkspaceState = (typeof STATES)[number];

export interface Trigger {
  readonly kind: 'telemetry' | 'provider_warning' | 'manual';
  readonly reason: string;
  /** Only observed readings, never an estimate. */
  readonly readings: readonly Reading[];
}

export interface Cycle {
  readonly id: string;
  readonly started_at: string;
  readonly trigger: Trigger;
  readonly profile: Profile;
  readonly checkpoint: VerifiedCheckpoint | null;
  readonly return_checkpoint: VerifiedCheckpoint | null;
  readonly drain: DrainProgress;
  /** Who took the cycle over, from which work tree (null: on another machine), with which token (the return is fenced by it). */
  readonly receiver: { readonly executor: string; readonly root: string | null; readonly token: number } | null;
  /** Set when the lease also travels through a git remote (`refs/handoff/lease/<cycle>`). */
  readonly remote: RemoteTracking | null;
  /** The return leg's drain, once the holder ran `handoff return`. */
  readonly return_drain: DrainProgress | null;
  /**
   * A return leg's drain that `handoff cancel` ended: the next `handoff return` continues its revisions,
   * so the create-once package files and the `-return` ref it already wrote are never written over.
   */
  readonly abandoned_return?: DrainProgress | null;
}

/** What the last event did, for the caller: a registry code and whether anything changed. */
export interface Outcome {
  readonly code: Code;
  readonly message: string | null;
  readonly hint: string | null;
  readonly data: Readonly<Record<string, unknown>> | null;
  /** false: the event is refused or moot; the daemon neither journals nor applies it. */
  readonly changed: boolean;
}

export interface WorkspaceContext {
  readonly root: string;
  readonly policy: PressurePolicy;
  readonly profile: Profile;
  /** Time and entropy of the event being handled: the machine's only clock and dice. */
  readonly now: number;
  readonly entropy: string;
  /** The state the workspace is in (its top level), set on entry: what a refusal names. */
  readonly stage: WorkspaceState;
  readonly stage_since: string;
  readonly readings: Readonly<Record<string, Reading>>;
  readonly warnings: readonly ProviderWarning[];
  readonly paused: { readonly global: PauseInfo | null; readonly workspace: PauseInfo | null };
  readonly cycle: Cycle | null;
  readonly blocked: string | null;
  readonly lease: LeaseState;
  readonly capsule: CapsuleState | null;
  /** When PREPARE began (kept through EVACUATE): a capsule written before it is stale. */
  readonly prepare_since: string | null;
  /**
   * When an operator asked for PREPARE (`handoff prepare`); null when pressure brought it. A manual
   * PREPARE holds until a reading observed after the request shows relief, or the workspace returns to
   * NORMAL: readings that were already there when the operator asked are not news.
   */
  readonly prepare_requested_at?: string | null;
  /**
   * When an operator last ran `handoff cancel`: readings observed until then are not news, so the
   * pressure that was already there cannot start the cancelled stage again by itself.
   */
  readonly cancelled_at?: string | null;
  /** What PREPARE's last rehearsal proved about the way out (daemon/rehearsal/); absent before the first. */
  readonly way_out?: WayOut | null;
  readonly outcome: Outcome;
}

export interface WorkspaceInput {
  readonly root: string;
  readonly policy: PressurePolicy;
  readonly profile: Profile;
  readonly at: number;
}

/** Every time the context records is the event's `at` (context.now) in ISO form. */
export const iso = (ms: number): string => new Date(ms).toISOString();
