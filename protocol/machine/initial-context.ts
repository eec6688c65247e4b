import { FREE_LEASE } from '../lease-rules.js';
import { iso, type WorkspaceContext, type WorkspaceInput } from './context.js';
import { done } from './outcome.js';

/** The input of an actor that only computes a transition (see the machine's context factory). */
const DETACHED: WorkspaceInput = {
  root: '',
  policy: { prepare_percent: 80, evacuate_percent: 90, hysteresis_percent: 5, freshness_seconds: 600 },
  profile: 'emergency-return',
  at: 0,
};

// xstate's pure `transition()` builds a throwaway actor without input; its context is never used,
// but a factory that throws there costs an exception on every event.
export const initialContext = ({ input = DETACHED }: { input?: WorkspaceInput }): WorkspaceContext => ({
  root: input.root,
  policy: input.policy,
  profile: input.profile,
  now: input.at,
  entropy: 'aaaaaa',
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
