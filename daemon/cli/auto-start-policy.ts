import { join } from 'node:path';
import { CONFIG_FILE, loadConfig } from '../config.js';
import { autoStartOffByEnv, NO_AUTO_START_ENV } from './auto-start.js';

/**
 * The one rule for whether a daemon may be started for `stateDir` without being asked: why not, or
 * null when it may. The CLI asks it before starting one; a daemon started with `--auto` asks it
 * again, so the hooks (which load no config) follow the same rule.
 */
export async function autoStartRefusal(stateDir: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  if (autoStartOffByEnv(env)) return `${NO_AUTO_START_ENV} is set`;
  const config = await loadConfig(stateDir);
  return config.auto_start ? null : `auto_start is false in ${join(stateDir, CONFIG_FILE)}`;
}
