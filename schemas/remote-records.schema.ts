import { Type, type Static } from '@sinclair/typebox';
import { ExecutorIdSchema, LeaseTokenSchema } from './lease.schema.js';
import { literals } from './literals.js';
import { IsoTimeSchema, Sha256Schema } from './telemetry.schema.js';

/**
 * Records read from a remote's `refs/handoff/` are untrusted input: anyone who can push there wrote
 * them. These schemas hold the strict patterns checked before any field is used (docs/refs.md).
 */
const CYCLE = '[0-9]{8}T[0-9]{6}Z-[a-z2-7]{6}';
const ObjectId = Type.String({ pattern: '^[0-9a-f]{40}([0-9a-f]{24})?$' });
/** A remote's name as git allows it, never an option and never a path that climbs. */
const RemoteName = Type.String({ pattern: '^(?!-)(?!.*\\.\\.)[A-Za-z0-9._/-]{1,200}$' });
/** A file of the package, relative to the cycle's directory, in plain segments. */
const PackagePath = Type.String({ pattern: '^(?!.*(^|/)\\.{1,2}(/|$))[A-Za-z0-9._-]{1,100}(/[A-Za-z0-9._-]{1,100}){0,3}$' });

/**
 * `lease.json` on `refs/handoff/lease/<cycle>`. `withdrawn` (the source's `handoff cancel` of its offer),
 * `broken` and `released` (an operator's break, the holder's release) have no holder: nobody's token counts.
 */
export const RemoteLeaseRecordSchema = Type.Object(
  {
    schema_version: Type.Literal(1),
    cycle: Type.String({ pattern: `^${CYCLE}$` }),
    state: literals(['offered', 'taken', 'return_offered', 'closed', 'withdrawn', 'broken', 'released']),
    holder: Type.Union([Type.Object({ executor: ExecutorIdSchema, token: LeaseTokenSchema }, { additionalProperties: false }), Type.Null()]),
    last_token: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    manifest: Type.Object(
      { path: Type.String({ pattern: '^(return/)?manifest(\\.[0-9]{1,6})?\\.json$' }), sha256: Sha256Schema },
      { additionalProperties: false },
    ),
    at: IsoTimeSchema,
    /**
     * The source's kill switch while its offer stands (`handoff pause` there): another machine's accept
     * is refused (`paused_denied`). Absent in records written before it existed: not paused.
     */
    paused: Type.Optional(
      Type.Union([
        Type.Object(
          { since: IsoTimeSchema, reason: Type.Union([Type.String({ maxLength: 500, pattern: '^[^\\u0000-\\u001f\\u007f]*$' }), Type.Null()]) },
          { additionalProperties: false },
        ),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: false },
);

/**
 * What a manifest read from `refs/handoff/packages/<cycle>` must hold beyond the manifest schema:
 * its checkpoint is a pushed handoff branch named by the contract, and its artifacts stay inside
 * the cycle. The fields not named here are checked by the manifest schema itself.
 */
export const TravellingManifestSchema = Type.Object({
  cycle_id: Type.String({ pattern: `^${CYCLE}$` }),
  checkpoint: Type.Object({
    mechanism: Type.Literal('handoff_branch'),
    ref: Type.String({ pattern: `^refs/heads/handoff/${CYCLE}(-return)?$` }),
    commit: ObjectId,
    tree: ObjectId,
    remote: RemoteName,
  }),
  repository: Type.Object({ remote_url: Type.Union([Type.String({ maxLength: 4096, pattern: '^(?!-)[^\\u0000-\\u001f\\u007f]*$' }), Type.Null()]) }),
  integrity: Type.Object({ artifacts: Type.Array(Type.Object({ path: PackagePath }), { maxItems: 16 }) }),
});

export type RemoteLeaseRecordData = Static<typeof RemoteLeaseRecordSchema>;
