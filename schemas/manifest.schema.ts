import { Type, type Static } from '@sinclair/typebox';
import { CapsuleSchema } from './capsule.schema.js';
import { literals } from './literals.js';
import { EpochSecondsSchema, IsoTimeSchema, MetricSchema, Sha256Schema, SourceSchema } from './telemetry.schema.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const Text = Type.String({ maxLength: 4000 });
const Sha1 = Type.String({ pattern: '^[0-9a-f]{40}([0-9a-f]{24})?$' });
const Paths = Type.Array(Type.String({ maxLength: 4096 }));

export const ManifestReadingSchema = Type.Object(
  {
    source: SourceSchema,
    metric: MetricSchema,
    used_percent: Nullable(Type.Number({ minimum: 0 })),
    resets_at: Nullable(EpochSecondsSchema),
    observed_at: IsoTimeSchema,
    raw_sha256: Nullable(Sha256Schema),
  },
  { additionalProperties: false },
);

export const InstructionFileSchema = Type.Object({ path: Type.String({ maxLength: 4096 }), sha256: Sha256Schema }, { additionalProperties: false });

/** What the daemon observed of the repository; never the agent's word. */
export const RepositorySchema = Type.Object(
  {
    remote: Nullable(Type.String({ maxLength: 200 })),
    remote_url: Nullable(Type.String({ maxLength: 4096 })),
    root_commit: Nullable(Sha1),
    branch: Nullable(Type.String({ maxLength: 1000 })),
    head: Nullable(Sha1),
    upstream: Nullable(Type.String({ maxLength: 1000 })),
    ahead: Nullable(Type.Integer({ minimum: 0 })),
    behind: Nullable(Type.Integer({ minimum: 0 })),
    dirty: Type.Object({ staged: Paths, unstaged: Paths, untracked: Paths }, { additionalProperties: false }),
    operation_in_progress: Nullable(literals(['rebase', 'merge', 'cherry-pick', 'bisect'])),
    instructions: Type.Array(InstructionFileSchema),
  },
  { additionalProperties: false },
);

export const ValidationSchema = Type.Object(
  {
    command: Nullable(Text),
    status: literals(['passed', 'failed', 'timed_out', 'not_run']),
    exit_code: Nullable(Type.Integer()),
    duration_ms: Nullable(Type.Integer({ minimum: 0 })),
    output_tail: Nullable(Type.String({ maxLength: 8192 })),
    /**
     * Evidence of when it ran (absent in manifests written before it was kept): at `evacuation` in
     * the drain, or at `prepare` by the rehearsal, reused because the work tree has not changed since.
     */
    ran_in: Type.Optional(literals(['prepare', 'evacuation'])),
    ran_at: Type.Optional(IsoTimeSchema),
  },
  { additionalProperties: false },
);

export const CheckpointSchema = Type.Object(
  {
    mechanism: literals(['handoff_branch', 'local_ref', 'capsule_only']),
    ref: Nullable(Type.String({ maxLength: 1000 })),
    commit: Nullable(Sha1),
    tree: Nullable(Sha1),
    remote: Nullable(Type.String({ maxLength: 200 })),
    remote_verified: Type.Boolean(),
    created_at: IsoTimeSchema,
  },
  { additionalProperties: false },
);

/** A file kept off the pushed snapshot because the secret scan found something in it; never the secret. */
export const WithheldSchema = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: 4096 }),
    /** The scanner's rule id, e.g. `@secretlint/secretlint-rule-aws`. */
    rule: Type.String({ minLength: 1, maxLength: 200 }),
    reason: Type.String({ maxLength: 500 }),
  },
  { additionalProperties: false },
);

export const UnscannedSchema = literals(['binary', 'too_large', 'unreadable']);
export const AllowListSourceSchema = literals(['absent', 'read', 'ignored']);

/**
 * The rest of what the secret scan decided: files pushed on purpose or unscanned, and where the allow
 * list came from (`ignored`: it is tracked or in a commit, so the remote could have written it).
 */
export const SecretScanSchema = Type.Object(
  {
    allow_list: AllowListSourceSchema,
    allowed: Paths,
    unscanned: Type.Array(Type.Object({ path: Type.String({ maxLength: 4096 }), why: UnscannedSchema }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

const NullableCapsuleFields = Type.Object(
  {
    ...CapsuleSchema.properties,
    objective: Nullable(Type.String({ maxLength: 4000 })),
    next_action: Nullable(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);

/**
 * `schemas/manifest.schema.json` is generated from this (npm run schemas) and tested to match.
 * Every key is present; what is not known is null or [], never invented.
 */
export const ManifestSchema = Type.Object(
  {
    schema_version: Type.Literal(1),
    cycle_id: Type.String({ pattern: '^[0-9]{8}T[0-9]{6}Z-[a-z2-7]{6}$' }),
    leg: literals(['out', 'return']),
    revision: Type.Integer({ minimum: 1 }),
    profile: literals(['emergency-return', 'one-way']),
    created_at: IsoTimeSchema,
    predecessor: Nullable(Sha256Schema),
    authority: Type.Literal('none'),
    trigger: Type.Object(
      { kind: literals(['telemetry', 'provider_warning', 'manual']), reason: Text, readings: Type.Array(ManifestReadingSchema) },
      { additionalProperties: false },
    ),
    /** Why the drain stopped waiting for the agent's `handoff drained` (absent in packages made before it was recorded). */
    drain_wait: Type.Optional(Nullable(literals(['drained', 'timeout', 'no_wait', 'no_agent']))),
    roles: Type.Object(
      { source: Nullable(Type.String({ maxLength: 200 })), destination: Nullable(Type.String({ maxLength: 200 })) },
      { additionalProperties: false },
    ),
    capsule_source: literals(['agent', 'missing']),
    /** protocol/capsule-quality.ts: six rules, one point each, with what is missing. */
    capsule_quality: Type.Object(
      { score: Type.Integer({ minimum: 0 }), max: Type.Integer({ minimum: 1 }), missing: Type.Array(Type.String({ maxLength: 2000 })) },
      { additionalProperties: false },
    ),
    capsule: NullableCapsuleFields,
    repository: RepositorySchema,
    validations: Type.Array(ValidationSchema),
    checkpoint: CheckpointSchema,
    /** Files the secret scan kept off the snapshot (absent in packages made before the scan existed). */
    withheld: Type.Optional(Type.Array(WithheldSchema, { maxItems: 10_000 })),
    /** Allowed and unscanned files and the allow list's source (absent in packages made before they were recorded). */
    secret_scan: Type.Optional(SecretScanSchema),
    integrity: Type.Object(
      { artifacts: Type.Array(Type.Object({ path: Type.String({ maxLength: 4096 }), sha256: Sha256Schema }, { additionalProperties: false })) },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, $id: 'https://session-handoff.dev/schemas/manifest.schema.json' },
);

export type Manifest = Static<typeof ManifestSchema>;
export type ManifestReading = Static<typeof ManifestReadingSchema>;
export type RepositoryObservation = Static<typeof RepositorySchema>;
export type Validation = Static<typeof ValidationSchema>;
export type Checkpoint = Static<typeof CheckpointSchema>;
export type Withheld = Static<typeof WithheldSchema>;
export type SecretScanRecord = Static<typeof SecretScanSchema>;
export type Unscanned = Static<typeof UnscannedSchema>;
export type AllowListSource = Static<typeof AllowListSourceSchema>;
