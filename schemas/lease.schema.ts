import { Type, type Static } from '@sinclair/typebox';
import { IsoTimeSchema } from './telemetry.schema.js';

export const ExecutorIdSchema = Type.String({ pattern: '^[A-Za-z0-9._:@/+-]{1,200}$' });
export const LeaseTokenSchema = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

export const LeaseHolderSchema = Type.Object(
  { executor: ExecutorIdSchema, token: LeaseTokenSchema, acquired_at: IsoTimeSchema, renewed_at: IsoTimeSchema },
  { additionalProperties: false },
);

export const LeaseBreakSchema = Type.Object(
  {
    at: IsoTimeSchema,
    reason: Type.String({ minLength: 1, maxLength: 2000 }),
    executor: Type.Union([ExecutorIdSchema, Type.Null()]),
    token: Type.Union([LeaseTokenSchema, Type.Null()]),
  },
  { additionalProperties: false },
);

/**
 * One execution lease per workspace. `last_token` only grows: a token is never issued twice, so a
 * holder that lost the lease (break, accept by another) is refused by comparing tokens alone.
 */
export const LeaseSchema = Type.Object(
  {
    holder: Type.Union([LeaseHolderSchema, Type.Null()]),
    last_token: Type.Integer({ minimum: 0 }),
    /** The lease waits for a verified `handoff accept` (HANDOFF_READY, RETURN_HANDOFF_READY). */
    offered: Type.Boolean(),
    last_break: Type.Union([LeaseBreakSchema, Type.Null()]),
  },
  { additionalProperties: false },
);

export type LeaseHolder = Static<typeof LeaseHolderSchema>;
export type LeaseBreak = Static<typeof LeaseBreakSchema>;
export type LeaseState = Static<typeof LeaseSchema>;
