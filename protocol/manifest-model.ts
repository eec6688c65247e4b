import type { Capsule, Checkpoint, Manifest, RepositoryObservation, Validation, Withheld } from '../schemas/index.js';
import type { CapsuleQuality } from './capsule-quality.js';
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
}

const EMPTY_CAPSULE: Manifest['capsule'] = {
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
    repository: inputs.repository,
    validations: [...inputs.validations],
    checkpoint: inputs.checkpoint,
    withheld: (inputs.withheld ?? []).map(({ path, rule, reason }) => ({ path, rule, reason })),
    integrity: { artifacts: [] },
  };
}

/** Stable bytes: the sha256 recorded for a manifest is of exactly this text. */
export function serializeManifest(manifest: Manifest): string {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}
