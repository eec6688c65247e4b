import { FREE_LEASE } from '../lease-rules.js';
import { iso, type WorkspaceContext, type WorkspaceInput } from './context.js';
import { done } from './outcome.js';

// Every actor of this machine is made with its input (initialSnapshot, step's inert scope).
export const initialContext = ({ input }: { input: WorkspaceInput }): WorkspaceContext => ({
  root: input.root,
  policy: input.policy,
  profile: input.profile,
  now: input.at,
  entropy: 'aaaaaa',
  // Stryker disable next-line StringLiteral: NORMAL's entry (enterStage) writes the stage before anyone reads it
  stage: 'NORMAL',
  stage_since: iso(input.at),
  readings: {},
  warnings: [],
  paused: { global: null, workspace: null },
  cycle: null,
  blocked: null,
  lease: FREE_LEASE,
  capsule: null,
  prepare_since: null,
  prepare_requested_at: null,
  cancelled_at: null,
  outcome: done('ok', null, false),
});
