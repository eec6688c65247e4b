import { Type, type Static } from '@sinclair/typebox';
import { literals } from './literals.js';
import { IsoTimeSchema } from './telemetry.schema.js';

export const WAY_OUT_STATES = ['proven', 'blocked', 'unknown'] as const;

/**
 * `GET /v1/status` → `data.way_out`: whether the evacuation could leave from here, as PREPARE's
 * rehearsal last proved it from the daemon's own environment (daemon/rehearsal/). Journaled with the
 * workspace; `unknown` until a rehearsal ran.
 */
export const WayOutSchema = Type.Object(
  {
    state: literals(WAY_OUT_STATES),
    checked_at: Type.Union([IsoTimeSchema, Type.Null()]),
    /** Why the way out is blocked (or why it is not known); null when proven. */
    cause: Type.Union([Type.String({ maxLength: 1000 }), Type.Null()]),
    /** What fixes a blocked way out, with the page that explains it; null otherwise. */
    fix: Type.Union([Type.String({ maxLength: 1000 }), Type.Null()]),
    /** The remote the drain would push to (its name), or null when the checkpoint would stay local. */
    remote: Type.Union([Type.String({ maxLength: 200 }), Type.Null()]),
    /** What was proven: e.g. `push accepted (dry run), server hooks accept refs/handoff/`. */
    proven: Type.Array(Type.String({ maxLength: 200 }), { maxItems: 8 }),
  },
  { additionalProperties: false },
);
export type WayOut = Static<typeof WayOutSchema>;
