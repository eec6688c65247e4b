import { Type } from '@sinclair/typebox';
import { ExecutorIdSchema } from './lease.schema.js';
import { SourceSchema } from './telemetry.schema.js';

/** `POST /v1/ingest/:adapter`: one raw payload for a named adapter. */
export const IngestParamsSchema = Type.Object({ adapter: SourceSchema }, { additionalProperties: false });

export const IngestBodySchema = Type.Object(
  {
    /** A directory inside the repository; without it the payload's own cwd routes it. */
    repo: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    /** The raw text as the agent or provider wrote it; the body size limit bounds it. */
    payload: Type.String(),
    /**
     * The session the payload belongs to when the payload itself does not say: the later chunks of
     * a Codex rollout file no longer carry the session_meta line that names it.
     */
    executor: Type.Optional(ExecutorIdSchema),
  },
  { additionalProperties: false },
);
