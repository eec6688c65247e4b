import { Type, type Static } from '@sinclair/typebox';
import { literals } from './literals.js';
import { IsoTimeSchema } from './telemetry.schema.js';

/**
 * `GET /v1/status` → `data.step_progress`: the drain step in flight right now, with a count where the
 * step can count (the snapshot's secret scan: files scanned of the changed files). Live, in memory
 * only: it is null between steps and after a restart, and never journaled.
 */
export const StepProgressSchema = Type.Object(
  {
    step: literals(['inspect', 'validate', 'snapshot', 'package', 'publish', 'offer'] as const),
    started_at: IsoTimeSchema,
    /** What the step is doing inside itself: `secret scan`, then `snapshot commit`; null before it says. */
    phase: Type.Union([literals(['secret scan', 'snapshot commit'] as const), Type.Null()]),
    done: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    total: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    unit: Type.Union([Type.Literal('files'), Type.Null()]),
  },
  { additionalProperties: false },
);
export type StepProgress = Static<typeof StepProgressSchema>;
