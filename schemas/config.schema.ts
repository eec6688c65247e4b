import { Type, type Static } from '@sinclair/typebox';
import { literals } from './literals.js';

export const PressurePolicySchema = Type.Object(
  {
    prepare_percent: Type.Number({ exclusiveMinimum: 0, maximum: 1000, default: 80 }),
    evacuate_percent: Type.Number({ exclusiveMinimum: 0, maximum: 1000, default: 90 }),
    hysteresis_percent: Type.Number({ minimum: 0, maximum: 100, default: 5 }),
    freshness_seconds: Type.Integer({ minimum: 1, maximum: 86_400, default: 600 }),
    /**
     * Codex per-model limit families (their `rate_limits.limit_id`) whose readings count for pressure.
     * By default only the account family does; per-model ones are shown and kept, not counted.
     */
    count_limit_families: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 64, default: [] })),
  },
  { additionalProperties: false, default: {} },
);

export const PROFILES = ['emergency-return', 'one-way'] as const;
export const ProfileSchema = literals(PROFILES, { default: 'emergency-return' });

/** `<state dir>/config.json`; every key optional, defaults filled in by ajv, then frozen. */
/** Telemetry outfiles an agent writes, which the daemon tails: each with the repository its records go to. */
const TelemetryOutfilesSchema = Type.Object(
  {
    telemetry_outfiles: Type.Array(
      Type.Object(
        {
          outfile: Type.String({ minLength: 2, maxLength: 4096, pattern: '^/' }),
          /** The repository its records go to; by default the one the outfile lies in. */
          repo: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, pattern: '^/' })),
        },
        { additionalProperties: false },
      ),
      { maxItems: 64, default: [] },
    ),
  },
  { additionalProperties: false, default: {} },
);

export const ConfigSchema = Type.Object(
  {
    pressure: PressurePolicySchema,
    profile: ProfileSchema,
    drain_timeout_seconds: Type.Integer({ minimum: 0, maximum: 3600, default: 60 }),
    validation: Type.Object(
      {
        /** The minimal check the drain runs (`sh -c`); null: recorded as not_run, never as passed. */
        command: Type.Union([Type.String({ minLength: 1, maxLength: 4000 }), Type.Null()], { default: null }),
        timeout_seconds: Type.Integer({ minimum: 1, maximum: 3600, default: 300 }),
      },
      { additionalProperties: false, default: {} },
    ),
    git_timeout_seconds: Type.Integer({ minimum: 1, maximum: 3600, default: 60 }),
    /** The scan of the files a snapshot would push (docs/security.md#secrets); past its budget the drain blocks. */
    secret_scan: Type.Object(
      {
        timeout_ms: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 120_000 }),
        /** Larger files are pushed unscanned (named in the journal): a key or a .env is small. */
        max_file_bytes: Type.Integer({ minimum: 1024, maximum: 104_857_600, default: 2_097_152 }),
      },
      { additionalProperties: false, default: {} },
    ),
    /** A manifest older than this is `stale` at accept: the source may have moved on. */
    /** How often a daemon reads a travelling lease from the remote (status and the guard also read it). */
    lease_sync_seconds: Type.Integer({ minimum: 5, maximum: 86_400, default: 30 }),
    /** The guard when a travelling lease cannot be verified on the remote: refuse every edit, or trust the last known holder. */
    guard_when_lease_unverified: literals(['refuse', 'last_known'], { default: 'refuse' }),
    /** Whether a CLI command or the SessionStart hook starts the daemon when none answers for the state dir. */
    auto_start: Type.Boolean({ default: true }),
    takeover_max_age_hours: Type.Number({ exclusiveMinimum: 0, maximum: 8760, default: 24 }),
    body_limit_bytes: Type.Integer({ minimum: 1024, maximum: 1_048_576, default: 65_536 }),
    journal: Type.Object(
      {
        /** Past this size (and four times its last compacted size) the journal is rewritten as one snapshot per workspace. */
        compact_after_bytes: Type.Integer({ minimum: 65_536, maximum: 1_073_741_824, default: 1_048_576 }),
        /** Readings that move nothing are written at most this often (and at shutdown), not one fsync each. */
        readings_flush_seconds: Type.Integer({ minimum: 1, maximum: 3600, default: 5 }),
      },
      { additionalProperties: false, default: {} },
    ),
    /** Gemini CLI telemetry outfiles the daemon tails (docs/agents/gemini.md); absolute paths, as Gemini resolves a relative one from where it runs. */
    gemini: TelemetryOutfilesSchema,
    /** Qwen Code telemetry outfiles the daemon tails (docs/agents/qwen.md): Gemini CLI's layout under Qwen's event names. */
    qwen: TelemetryOutfilesSchema,
    /** PREPARE's rehearsal of the evacuation (daemon/rehearsal/): the way out proven before it is needed. */
    rehearsal: Type.Object(
      {
        /** Off: nothing is tried at PREPARE; `handoff doctor` still rehearses on demand. */
        enabled: Type.Boolean({ default: true }),
        /** While in PREPARE, a rehearsal again once the last is this old and the work tree changed since. */
        interval_seconds: Type.Integer({ minimum: 60, maximum: 86_400, default: 600 }),
        /**
         * The validation command at PREPARE: `off` runs none; `reuse` runs it once and EVACUATE takes its
         * outcome while the work tree has not changed since (else runs it again); `rerun` runs it at
         * PREPARE as an early word and again at EVACUATE.
         */
        validate: literals(['off', 'reuse', 'rerun'], { default: 'off' }),
      },
      { additionalProperties: false, default: {} },
    ),
    /** `handoff hook claude-context`: tool calls after the PREPARE notice before its one reminder (0: never). */
    context_reminder_after_tool_calls: Type.Integer({ minimum: 0, maximum: 10_000, default: 20 }),
  },
  { additionalProperties: false },
);

export type PressurePolicy = Static<typeof PressurePolicySchema>;
export type Config = Static<typeof ConfigSchema>;
export type Profile = Static<typeof ProfileSchema>;
