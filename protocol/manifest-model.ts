import {
  RepositorySchema,
  type Capsule,
  type Checkpoint,
  type Manifest,
  type RepositoryObservation,
  type SecretScanRecord,
  type Validation,
  type Withheld,
} from '../schemas/index.js';
import type { CapsuleQuality } from './capsule-quality.js';
import { clipChars } from './printable.js';
import type { Cycle } from './workspace-machine.js';

/**
 * Where a package revision lives inside `.session-handoff/<cycle>/`. The out leg's first revision
 * is the contract's `manifest.json` + `HANDOFF.md`; later revisions never overwrite earlier ones.
 */
export function packageFiles(leg: 'out' | 'return', revision: number): { manifest: string; handoff: string } {
  const prefix = leg === 'return' ? 'return/' : '';
  const suffix = revision === 1 ? '' : `.${revision}`;
  return { manifest: `${prefix}manifest${suffix}.json`, handoff: `${prefix}HANDOFF${suffix}.md` };
}

export interface ManifestInputs {
  readonly cycle: Cycle;
  readonly leg: 'out' | 'return';
  readonly revision: number;
  readonly createdAt: string;
  readonly predecessor: string | null;
  readonly source: string | null;
  readonly capsule: Capsule | null;
  readonly quality: CapsuleQuality;
  readonly repository: RepositoryObservation;
  readonly validations: readonly Validation[];
  readonly checkpoint: Checkpoint;
  /** Files the secret scan kept off the snapshot (none when omitted). */
  readonly withheld?: readonly Withheld[];
  /** Allowed and unscanned files and the allow list's source (not recorded when omitted). */
  readonly secretScan?: SecretScanRecord;
}

/** A capsule with nothing in it: the manifest's fields an agent left out. */
export const EMPTY_CAPSULE: Manifest['capsule'] = {
  objective: null,
  acceptance_criteria: [],
  scope: [],
  out_of_scope: [],
  work: { completed: [], in_progress: [], remaining: [], blocked: [], deferred: [] },
  decisions: [],
  assumptions: [],
  rejected_approaches: [],
  do_not_repeat: [],
  first_files: [],
  next_action: null,
  risks: [],
  do_not_change_silently: [],
  tools_used: [],
};

/** The manifest schema's bound on a name the repository supplies (a branch, an upstream, a remote). */
function boundOf(field: 'branch' | 'upstream' | 'remote'): number {
  const [text] = RepositorySchema.properties[field].anyOf as [{ maxLength: number }, unknown];
  return text.maxLength;
}

/**
 * Names the repository supplies are bounded where they enter the manifest, clipped with a visible
 * '…', so a branch name of any length never makes the package fail its own schema (the observation
 * itself, used for git, keeps the whole name).
 */
function boundedRepository(repository: RepositoryObservation): RepositoryObservation {
  const clip = (value: string | null, field: 'branch' | 'upstream' | 'remote') => (value === null ? null : clipChars(value, boundOf(field)));
  return {
    ...repository,
    branch: clip(repository.branch, 'branch'),
    upstream: clip(repository.upstream, 'upstream'),
    remote: clip(repository.remote, 'remote'),
  };
}

/** The manifest without its integrity list, which depends on the HANDOFF.md rendered from it. */
export function buildManifest(inputs: ManifestInputs): Manifest {
  const { cycle } = inputs;
  return {
    schema_version: 1,
    cycle_id: cycle.id,
    leg: inputs.leg,
    revision: inputs.revision,
    profile: cycle.profile,
    created_at: inputs.createdAt,
    predecessor: inputs.predecessor,
    authority: 'none',
    trigger: {
      kind: cycle.trigger.kind,
      reason: cycle.trigger.reason,
      readings: cycle.trigger.readings.map(({ source, metric, used_percent, resets_at, observed_at, raw_sha256 }) => ({
        source,
        metric,
        used_percent,
        resets_at,
        observed_at,
        raw_sha256,
      })),
    },
    drain_wait: (inputs.leg === 'return' ? cycle.return_drain : cycle.drain)?.waited?.why ?? null,
    roles: { source: inputs.source, destination: null },
    capsule_source: inputs.capsule === null ? 'missing' : 'agent',
    capsule_quality: { score: inputs.quality.score, max: inputs.quality.max, missing: [...inputs.quality.missing] },
    capsule: inputs.capsule === null ? EMPTY_CAPSULE : { ...EMPTY_CAPSULE, ...inputs.capsule },
    repository: boundedRepository(inputs.repository),
    validations: [...inputs.validations],
    checkpoint: inputs.checkpoint,
    withheld: (inputs.withheld ?? []).map(({ path, rule, reason }) => ({ path, rule, reason })),
    ...(inputs.secretScan === undefined ? {} : { secret_scan: inputs.secretScan }),
    integrity: { artifacts: [] },
  };
}

/** Stable bytes: the sha256 recorded for a manifest is of exactly this text. */
export function serializeManifest(manifest: Manifest): string {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}
