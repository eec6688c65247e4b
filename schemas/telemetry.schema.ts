import { Type, type Static } from '@sinclair/typebox';
import { literals } from './literals.js';

/**
 * Named adapters: a reading is credible only when it comes from one of these. `handoff signal` must
 * name one too, so an operator relaying a number says where it was read.
 */
export const SOURCES = [
  'claude-statusline',
  'claude-hook',
  'codex-rollout',
  'anthropic-headers',
  'openai-headers',
  'json-file',
  'gemini-telemetry',
  'copilot-events',
  'copilot-statusline',
  'qwen-telemetry',
  'qwen-statusline',
] as const;

/**
 * `spend`: a spend limit's share the agent reported as a percentage (Claude Code's
 * `rate_limits.spend_limit.used_percentage`), never one computed from amounts of money.
 */
export const METRICS = ['context', 'five_hour', 'seven_day', 'weekly', 'monthly', 'requests', 'tokens', 'spend'] as const;

export const WARNING_KINDS = ['rate_limit', 'spend_cap', 'insufficient_quota', 'overloaded', 'other'] as const;

export const SourceSchema = literals(SOURCES);
export const MetricSchema = literals(METRICS);
export const WarningKindSchema = literals(WARNING_KINDS);

/** Epoch seconds, as every agent and provider reports a reset time. */
export const EpochSecondsSchema = Type.Number({ minimum: 0, maximum: 1e11 });
export const Sha256Schema = Type.String({ pattern: '^[0-9a-f]{64}$' });
export const IsoTimeSchema = Type.String({ format: 'date-time', maxLength: 40 });

/**
 * A Codex per-model limit family (`rate_limits.limit_id` other than `codex`, with its `limit_name`):
 * its windows are that model's, not the account's. Absent on account-wide readings and every other source.
 */
export const LimitFamilySchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 200 }),
    name: Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()]),
  },
  { additionalProperties: false },
);

export const ReadingSchema = Type.Object(
  {
    source: SourceSchema,
    metric: MetricSchema,
    /** Percent 0–100 and above (105 has been seen; never clamped). null = unknown, never 0. */
    used_percent: Type.Union([Type.Number({ minimum: 0, maximum: 100_000 }), Type.Null()]),
    resets_at: Type.Union([EpochSecondsSchema, Type.Null()]),
    observed_at: IsoTimeSchema,
    /** sha256 of the raw payload the number was read from; null when typed by an operator. */
    raw_sha256: Type.Union([Sha256Schema, Type.Null()]),
    /** The agent session that reported it (Claude session_id, Codex session id), when known. */
    executor: Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()]),
    /** Set only for a per-model limit family; it counts for pressure only when configured to. */
    limit: Type.Optional(LimitFamilySchema),
  },
  { additionalProperties: false },
);

export const WarningSchema = Type.Object(
  {
    source: SourceSchema,
    kind: WarningKindSchema,
    text: Type.String({ minLength: 1, maxLength: 2000 }),
    /** false: waiting does not help (spend cap, insufficient quota). null: not said. */
    recovers: Type.Union([Type.Boolean(), Type.Null()]),
    retry_after_seconds: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
    observed_at: IsoTimeSchema,
    raw_sha256: Type.Union([Sha256Schema, Type.Null()]),
    executor: Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()]),
  },
  { additionalProperties: false },
);

export type Source = (typeof SOURCES)[number];
export type Metric = (typeof METRICS)[number];
export type WarningKind = (typeof WARNING_KINDS)[number];
export type Reading = Static<typeof ReadingSchema>;
export type LimitFamily = Static<typeof LimitFamilySchema>;
export type ProviderWarning = Static<typeof WarningSchema>;
