import { Type, type Static } from '@sinclair/typebox';

const Item = Type.String({ minLength: 1, maxLength: 2000 });
const List = Type.Array(Item, { maxItems: 200, default: [] });

/**
 * The agent's continuation capsule: its own claims about the work (docs/concepts.md, Capsule; the manifest's `capsule`).
 * Everything the daemon cannot observe itself. Lists default to empty; text fields to null.
 */
export const CapsuleSchema = Type.Object(
  {
    objective: Type.Union([Type.String({ minLength: 1, maxLength: 4000 }), Type.Null()], { default: null }),
    acceptance_criteria: List,
    scope: List,
    out_of_scope: List,
    work: Type.Object({ completed: List, in_progress: List, remaining: List, blocked: List, deferred: List }, { additionalProperties: false, default: {} }),
    decisions: List,
    assumptions: List,
    rejected_approaches: List,
    do_not_repeat: List,
    first_files: Type.Array(Type.String({ minLength: 1, maxLength: 1000 }), { maxItems: 50, default: [] }),
    /** Exactly one next action: the first thing a receiver does. */
    next_action: Type.Union([Type.String({ minLength: 1, maxLength: 2000 }), Type.Null()], { default: null }),
    risks: List,
    do_not_change_silently: List,
    /** Names of tools, never their arguments or output (no secrets travel in a capsule). */
    tools_used: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100, default: [] }),
  },
  { additionalProperties: false },
);

export type Capsule = Static<typeof CapsuleSchema>;
