import type { ProviderWarning, Reading } from '../schemas/telemetry.schema.js';
import type { WayOut } from '../schemas/way-out.schema.js';
import type { PressurePolicy, Profile } from '../schemas/config.schema.js';
import type { DrainProgress, DrainStep, DrainWaitReason, StepRecord } from './drain-plan.js';
import type { RemoteLeaseRecord } from './remote-lease.js';
import type { Cycle } from './workspace-machine.js';

/**
 * Every event carries its time and six base32 characters of entropy, both made at the edge, so the
 * machine never reads a clock or a random source and a replayed event yields the same snapshot.
 */
export interface EventMeta {
  readonly at: number;
  readonly entropy: string;
}

export interface PauseInfo {
  readonly reason: string | null;
  readonly since: string;
  /** The file whose presence is the kill switch. */
  readonly path: string;
}

/** What the daemon knows of the agent's capsule file: when it last changed and whether it is valid. */
export interface CapsuleState {
  readonly sha256: string | null;
  readonly updated_at: string;
  /** null when valid; otherwise why the file was rejected (the previous valid content still counts). */
  readonly error: string | null;
}

/** A cycle whose lease travels through a git remote: which remote, and the lease chain's head we know. */
export interface RemoteTracking {
  /** A remote name of the repository (never a URL: a URL may carry credentials). */
  readonly name: string;
  readonly lease_head: string | null;
}

export type CheckpointMechanism = 'handoff_branch' | 'local_ref' | 'capsule_only';

export interface VerifiedCheckpoint {
  readonly mechanism: CheckpointMechanism;
  readonly ref: string | null;
  readonly commit: string | null;
  /** true only when the receiver can recover the work from what the mechanism says. */
  readonly verified: boolean;
}

/**
 * Which drain a runner's report is about (`drainKey()`): after `handoff cancel` a step still in flight
 * reports into nothing, not into the next cycle's (or the next return's) drain. Optional: an older
 * journal's events carry none.
 */
export interface DrainFence {
  readonly drain?: string;
}

export type WorkspaceEvent =
  | (EventMeta & { type: 'READING'; reading: Reading })
  | (EventMeta & { type: 'WARNING'; warning: ProviderWarning })
  | (EventMeta & { type: 'PREPARE'; reason: string | null })
  | (EventMeta & { type: 'NOW'; reason: string | null; wait: boolean })
  | (EventMeta & { type: 'PAUSE_SET'; scope: 'global' | 'workspace'; pause: PauseInfo | null })
  | (EventMeta & { type: 'CONFIG_SET'; policy: PressurePolicy; profile: Profile })
  | (EventMeta & { type: 'LEASE_ACQUIRE'; executor: string })
  | (EventMeta & { type: 'LEASE_RENEW'; token: number })
  | (EventMeta & { type: 'LEASE_RELEASE'; token: number })
  | (EventMeta & { type: 'LEASE_BREAK'; reason: string })
  | (EventMeta & DrainFence & { type: 'DRAIN_BLOCKED'; reason: string; step: DrainStep | null })
  | (EventMeta & { type: 'DRAINED' })
  | (EventMeta & DrainFence & { type: 'DRAIN_WAITED'; why: DrainWaitReason })
  | (EventMeta & DrainFence & { type: 'DRAIN_STEP_DONE'; step: DrainStep; record: StepRecord })
  | (EventMeta & DrainFence & { type: 'DRAIN_REVISION'; reason: string; previous_commit: string })
  | (EventMeta & { type: 'DRAIN_RESUME' })
  | (EventMeta & { type: 'CAPSULE_SET'; capsule: CapsuleState })
  | (EventMeta & DrainFence & { type: 'CHECKPOINT_VERIFIED'; checkpoint: VerifiedCheckpoint; remote: RemoteTracking | null })
  | (EventMeta & { type: 'HANDOFF_ACCEPTED'; executor: string; receiver_root: string; token: number | null })
  | (EventMeta & { type: 'RETURN_START'; token: number; wait: boolean })
  | (EventMeta & DrainFence & { type: 'RETURN_READY'; token: number; checkpoint: VerifiedCheckpoint })
  | (EventMeta & { type: 'RETURN_ACCEPTED'; executor: string; token: number | null })
  | (EventMeta & { type: 'CLOSE_ONE_WAY'; token: number })
  /** `handoff cancel`: end a stage, an out leg (drain or offer) or a return leg's drain; needs no token (it only withdraws). */
  /** `withdrawn`: the commit of the remote chain's `withdrawn` record, when the offer had gone out through a remote (pushed first). */
  | (EventMeta & { type: 'CANCEL'; reason: string | null; withdrawn?: string | null })
  | (EventMeta & { type: 'LEASE_HEAD'; lease_head: string })
  /** PREPARE's rehearsal (or `handoff doctor`'s) found the way out proven, blocked or unknown. */
  | (EventMeta & { type: 'WAY_OUT'; way_out: WayOut })
  /**
   * `accept --checkout` whose git move failed after the accept was journaled: the lease goes back on
   * offer (the token stays spent). `imported`: the accept imported the cycle from a remote (this
   * workspace was the receiver only); `lease_head`: the chain's `offered` record, when it travels.
   */
  | (EventMeta & { type: 'ACCEPT_UNDONE'; token: number; imported: boolean; reason: string; lease_head: string | null })
  | (EventMeta & { type: 'IMPORT_TAKEOVER'; cycle: Cycle; executor: string; token: number; receiver_root: string })
  /** `receiver_root`: the checkout of this machine where a `handoff lease acquire` took a travelling lease (it returns from there). */
  | (EventMeta & { type: 'REMOTE_LEASE'; lease: RemoteLeaseRecord; lease_head: string; return_drain: DrainProgress | null; receiver_root?: string | null });
