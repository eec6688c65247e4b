import { stateOf, type WorkspaceState } from '../../protocol/index.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';

const RECEIVING: ReadonlySet<WorkspaceState> = new Set(['TAKEOVER', 'RETURN_HANDOFF_READY']);

/**
 * The cycle a checkout took over and holds now, on this machine (its source's workspace) or imported
 * into its own: in TAKEOVER, and in RETURN_HANDOFF_READY too (the return it offered is still its cycle:
 * its holder may withdraw it) until the primary takes the work back.
 */
export function receivingCycle(registry: WorkspaceRegistry, checkout: string): { cycle: string; home: string } | null {
  for (const workspace of registry.all()) {
    const snapshot = workspace.snapshot();
    const cycle = snapshot.context.cycle;
    if (cycle !== null && cycle.receiver?.root === checkout && RECEIVING.has(stateOf(snapshot))) return { cycle: cycle.id, home: workspace.root };
  }
  return null;
}
