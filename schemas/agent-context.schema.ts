import { Type, type Static } from '@sinclair/typebox';
import { ExecutorIdSchema } from './lease.schema.js';
import { literals } from './literals.js';

/** The agent hook events that ask the daemon what the stage wants; Claude Code and Codex share the names. */
export const CONTEXT_EVENTS = ['SessionStart', 'UserPromptSubmit', 'PostToolUse'] as const;
export type ContextEvent = (typeof CONTEXT_EVENTS)[number];

/** `POST /v1/agent-context`: one hook event of one agent session, routed by its working directory. */
export const AgentContextBodySchema = Type.Object(
  {
    repo: Type.String({ minLength: 1, maxLength: 4096, description: "the session's working directory (inside the git repository)" }),
    /** The agent's session id: the executor it would accept a handoff as. */
    session: ExecutorIdSchema,
    event: literals(CONTEXT_EVENTS, {
      description: 'the hook event: SessionStart forgets what the session was told and answers the pickup of a ready handoff',
    }),
  },
  { additionalProperties: false },
);

export type AgentContextBody = Static<typeof AgentContextBodySchema>;
