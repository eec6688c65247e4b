import { Type, type Static } from '@sinclair/typebox';
import { literals } from './literals.js';
import { ExecutorIdSchema, LeaseTokenSchema } from './lease.schema.js';
import { EpochSecondsSchema, IsoTimeSchema, MetricSchema, SourceSchema, WarningKindSchema } from './telemetry.schema.js';

/** Request bodies and queries of the HTTP API: one schema each, used by fastify and for the TS types. */

const Repo = Type.String({ minLength: 1, maxLength: 4096, description: 'a directory inside the git repository' });
const Reason = Type.String({ minLength: 1, maxLength: 2000 });
const body = <T extends Parameters<typeof Type.Object>[0]>(properties: T) => Type.Object(properties, { additionalProperties: false });

export const RepoQuerySchema = body({ repo: Repo });

/** Query strings are not coerced: numbers come as digits. */
const Digits = (description: string) => Type.String({ pattern: '^[0-9]{1,9}$', description });

/** `GET /v1/status`: with `after_change`, a long poll that answers once the workspace changed (or `wait_ms` passed). */
export const StatusQuerySchema = body({
  repo: Repo,
  after_change: Type.Optional(Digits('the `change` of the last status seen: answer once the workspace has moved past it')),
  wait_ms: Type.Optional(Digits('how long to wait for that change, at most 25000 ms (default 20000)')),
  lease_wait_ms: Type.Optional(
    Digits(
      'how long to wait for a lease that travels to be read on the remote; past it, the last known lease answers and counts as unverified (guard_when_lease_unverified). The edit guard sends it so that its answer never waits on the network',
    ),
  ),
});

export const SignalBodySchema = body({
  repo: Repo,
  source: SourceSchema,
  metric: MetricSchema,
  // A manual reading (`handoff signal`): a percent a person typed; adapters keep what agents report (ingest).
  used_percent: Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.Null()]),
  resets_at: Type.Optional(Type.Union([EpochSecondsSchema, Type.Null()])),
  observed_at: Type.Optional(IsoTimeSchema),
  executor: Type.Optional(Type.Union([ExecutorIdSchema, Type.Null()])),
});

export const WarningBodySchema = body({
  repo: Repo,
  source: SourceSchema,
  text: Type.String({ minLength: 1, maxLength: 2000 }),
  kind: Type.Optional(WarningKindSchema),
  recovers: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  retry_after_seconds: Type.Optional(Type.Union([Type.Number({ minimum: 0 }), Type.Null()])),
  executor: Type.Optional(Type.Union([ExecutorIdSchema, Type.Null()])),
});

export const StageBodySchema = body({ repo: Repo, reason: Type.Optional(Reason) });
/** `wait: false` is `handoff now --no-wait`: do not wait for the agent's `handoff drained`. */
export const NowBodySchema = body({ repo: Repo, reason: Type.Optional(Reason), wait: Type.Optional(Type.Boolean()) });
/** The capsule as JSON (an object) or as Markdown with the manifest's headings (a string). */
export const CapsuleBodySchema = body({
  repo: Repo,
  capsule: Type.Union([Type.Object({}, { additionalProperties: true }), Type.String({ maxLength: 60_000 })]),
});

export const LeaseAcquireBodySchema = body({ repo: Repo, as: ExecutorIdSchema });
export const LeaseTokenBodySchema = body({ repo: Repo, token: LeaseTokenSchema });
export const LeaseBreakBodySchema = body({ repo: Repo, reason: Reason });

const CycleId = Type.String({ pattern: '^[0-9]{8}T[0-9]{6}Z-[a-z2-7]{6}$', description: 'a cycle id; anything else (a path, ..) is refused' });

/** A remote name of the receiver's repository (never a URL: a URL may carry credentials). */
const RemoteName = Type.String({ pattern: '^[A-Za-z0-9._-]{1,100}$' });

export const VerifyBodySchema = body({
  repo: Repo,
  from: Type.Optional(RemoteName),
  cycle: Type.Optional(CycleId),
  latest: Type.Optional(Type.Boolean()),
  return: Type.Optional(Type.Boolean()),
  checkout: Type.Optional(Type.Boolean()),
});
export const AcceptBodySchema = body({ ...VerifyBodySchema.properties, as: ExecutorIdSchema });
export const ReturnBodySchema = body({ repo: Repo, token: Type.Optional(LeaseTokenSchema), wait: Type.Optional(Type.Boolean()) });
export const CloseBodySchema = body({ repo: Repo, one_way: Type.Boolean(), token: Type.Optional(LeaseTokenSchema) });
/** `POST /v1/prune`: the finished cycles' handoff refs, here and (with `remote`) on that remote. */
export const PruneBodySchema = body({ repo: Repo, remote: Type.Optional(RemoteName), dry_run: Type.Boolean() });
export const CycleQuerySchema = body({ cycle: CycleId });

/** `GET /v1/cycles/resolve`: the start of a cycle id, as git takes a short SHA (at least the 8 digits of its date). */
export const CyclePrefixQuerySchema = body({
  prefix: Type.String({ pattern: '^[0-9]{8}(T[0-9]{0,6}(Z(-[a-z2-7]{0,6})?)?)?$', description: 'the start of a cycle id' }),
});

/** `POST /v1/operations/cancel`: the id the CLI named its request with (`handoff-operation` header). */
export const OperationCancelBodySchema = body({
  operation: Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', description: 'a UUID' }),
});
export const ListQuerySchema = body({
  repo: Type.Optional(Repo),
  all: Type.Optional(literals(['true'], { description: 'every cycle on record, not only the latest' })),
});

/** `POST /v1/hello`: a client's fresh random challenge; the daemon answers with an HMAC under its token. */
export const HelloBodySchema = body({
  nonce: Type.String({
    minLength: 16,
    maxLength: 128,
    pattern: '^[A-Za-z0-9_-]+$',
    description: 'a fresh random value (16–128 characters of A–Z a–z 0–9 _ -)',
  }),
});

export const PauseBodySchema = body({
  scope: literals(['workspace', 'global']),
  repo: Type.Optional(Repo),
  reason: Type.Optional(Reason),
});

export type SignalBody = Static<typeof SignalBodySchema>;
export type WarningBody = Static<typeof WarningBodySchema>;
export type StageBody = Static<typeof StageBodySchema>;
export type NowBody = Static<typeof NowBodySchema>;
export type CapsuleBody = Static<typeof CapsuleBodySchema>;
export type LeaseAcquireBody = Static<typeof LeaseAcquireBodySchema>;
export type LeaseTokenBody = Static<typeof LeaseTokenBodySchema>;
export type LeaseBreakBody = Static<typeof LeaseBreakBodySchema>;
export type PauseBody = Static<typeof PauseBodySchema>;
export type VerifyBody = Static<typeof VerifyBodySchema>;
export type AcceptBody = Static<typeof AcceptBodySchema>;
export type ReturnBody = Static<typeof ReturnBodySchema>;
export type CloseBody = Static<typeof CloseBodySchema>;
export type PruneBody = Static<typeof PruneBodySchema>;
