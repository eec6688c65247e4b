import { success, type Envelope } from '../protocol/index.js';
import type { Config } from '../schemas/index.js';
import { appliesLive, changedKeys, loadConfig } from './config.js';
import type { Logger } from './logger.js';
import type { WorkspaceRegistry } from './workspaces/registry.js';

export interface ConfigReloadDeps {
  readonly stateDir: string;
  /** The config the daemon started with: what every key that is not live still runs on. */
  readonly started: Config;
  readonly registry: WorkspaceRegistry;
  readonly log: Logger;
}

/**
 * `POST /v1/config/reload` (`handoff config set` after it wrote the file): reads the file again as a
 * start would (a bad one is refused and changes nothing), hands the policy keys to every workspace's
 * machine, and says which changed keys wait for the next start.
 */
export function createConfigReload(deps: ConfigReloadDeps) {
  let running = deps.started;
  return {
    async reload(): Promise<Envelope> {
      const next = await loadConfig(deps.stateDir);
      const changed = changedKeys(running, next);
      const applied = changed.filter(appliesLive);
      const moves = await deps.registry.applyPolicy(next);
      // The keys that are not live keep their start values, so the next reload still names them.
      running = { ...deps.started, pressure: next.pressure, profile: next.profile, auto_start: next.auto_start };
      const atNextStart = changedKeys(running, next);
      if (changed.length > 0) deps.log.info({ applied, atNextStart, moves }, 'config reloaded');
      const { prepare_percent, evacuate_percent, hysteresis_percent } = next.pressure;
      return success('ok', {
        applied,
        at_next_start: atNextStart,
        moves,
        thresholds: { prepare_percent, evacuate_percent, hysteresis_percent },
      });
    },
  };
}

export type ConfigReload = ReturnType<typeof createConfigReload>;
