import { stateOf } from '../../protocol/index.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';

/** The cycle a checkout took over and holds now: on this machine (its source's workspace) or imported into its own. */
export function receivingCycle(registry: WorkspaceRegistry, checkout: string): { cycle: string; home: string } | null {
  for (const workspace of registry.all()) {
    const snapshot = workspace.snapshot();
    const cycle = snapshot.context.cycle;
    if (cycle !== null && cycle.receiver?.root === checkout && stateOf(snapshot) === 'TAKEOVER') return { cycle: cycle.id, home: workspace.root };
  }
  return null;
}
