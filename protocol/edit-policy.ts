import type { WorkspaceState } from './workspace-machine.js';

/** Who may change files in a workspace now; the Claude Code guard enforces it, the lease decides it. */
export interface EditPolicy {
  readonly who: 'anyone' | 'holder' | 'nobody';
  readonly why: string;
}

const ON_OFFER = 'the work is handed off and frozen until a receiver accepts it';

/**
 * NORMAL and PREPARE: anyone. EVACUATE: only the holder, to finish its atomic step. While the lease
 * is on offer (HANDOFF_READY, RETURN_HANDOFF_READY) nobody: the source is frozen. TAKEOVER: the
 * holder. A lease that travels through an unreachable remote cannot be trusted: by default nobody.
 */
export function editPolicy(state: WorkspaceState, unverifiedSince: string | null, whenUnverified: 'refuse' | 'last_known'): EditPolicy {
  const travelling = state === 'HANDOFF_READY' || state === 'TAKEOVER' || state === 'RETURN_HANDOFF_READY';
  if (travelling && unverifiedSince !== null && whenUnverified === 'refuse') {
    return { who: 'nobody', why: `the lease could not be verified on the remote since ${unverifiedSince}; edits wait until it can` };
  }
  switch (state) {
    case 'EVACUATE':
      return { who: 'holder', why: 'the daemon is checkpointing: only the lease holder finishes its atomic step' };
    case 'HANDOFF_READY':
      return { who: 'nobody', why: ON_OFFER };
    case 'RETURN_HANDOFF_READY':
      return { who: 'nobody', why: 'the work was handed back and waits for the primary to accept it' };
    case 'TAKEOVER':
      return { who: 'holder', why: 'another executor took over; only the lease holder changes files' };
    default:
      return { who: 'anyone', why: 'no handoff in progress' };
  }
}
