import type { Logger } from '../logger.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';

/**
 * The drain runs when a workspace enters EVACUATE. Until checkpointing lands, the honest answer is a
 * blocked reason: the machine then never claims HANDOFF_READY it cannot back.
 */
export function createDrain(registry: () => WorkspaceRegistry, log: Logger) {
  return {
    start(root: string): void {
      setImmediate(() => {
        registry()
          .dispatch(root, { type: 'DRAIN_BLOCKED', reason: 'drain not available: this version cannot checkpoint the work tree yet' })
          .catch((error: unknown) => log.error({ err: error, workspace: root }, 'could not record the drain state'));
      });
    },
  };
}

export type Drain = ReturnType<typeof createDrain>;
