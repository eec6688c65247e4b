import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HandoffError } from '../protocol/index.js';
import { ConfigSchema, type Config } from '../schemas/index.js';
import { precompiled } from './precompiled.js';
import { describeErrors } from './schema-check.js';

export const CONFIG_FILE = 'config.json';

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** Read → defaults → validate → freeze. A missing file means all defaults; a bad one stops the daemon. */
export async function loadConfig(stateDir: string): Promise<Config> {
  const path = join(stateDir, CONFIG_FILE);
  let raw: unknown = {};
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new HandoffError('invalid_config', `${path} is not readable JSON: ${(error as Error).message}`, `fix or remove ${path}; every key is optional`);
    }
  }
  return parseConfig(raw, path);
}

const validate = precompiled<Config>(ConfigSchema);

export function parseConfig(raw: unknown, origin: string): Config {
  if (!validate(raw)) {
    throw new HandoffError(
      'invalid_config',
      `${origin}: ${describeErrors(validate.errors, 'config')}`,
      'see docs/configuration.md for the keys and their ranges',
    );
  }
  const { prepare_percent, evacuate_percent, hysteresis_percent } = raw.pressure;
  if (prepare_percent >= evacuate_percent) {
    throw new HandoffError(
      'invalid_config',
      `${origin}: pressure.prepare_percent (${prepare_percent}) must be below evacuate_percent (${evacuate_percent})`,
      'PREPARE comes before EVACUATE',
    );
  }
  if (hysteresis_percent >= prepare_percent) {
    throw new HandoffError(
      'invalid_config',
      `${origin}: pressure.hysteresis_percent (${hysteresis_percent}) must be below prepare_percent (${prepare_percent})`,
      'the fall-back line is prepare − hysteresis',
    );
  }
  return deepFreeze(raw);
}

type SchemaNode = { properties?: Record<string, SchemaNode> };

/** Every settable key, nested ones as `parent.child`, from the schema that validates the file. */
export function configKeys(schema: SchemaNode = ConfigSchema as SchemaNode, prefix = ''): string[] {
  return Object.entries(schema.properties ?? {}).flatMap(([name, child]) => (child.properties ? configKeys(child, `${prefix}${name}.`) : [`${prefix}${name}`]));
}

/**
 * Keys a running daemon takes without a restart: the policy each workspace's machine holds (a
 * CONFIG_SET event moves it), and auto_start, which every CLI command reads itself. Every other key is
 * wired into a listener, a watcher, the journal or the drain at start.
 */
const LIVE_KEYS: ReadonlySet<string> = new Set(['profile', 'auto_start']);
export const appliesLive = (key: string): boolean => key.startsWith('pressure.') || LIVE_KEYS.has(key);

export function configValue(config: Config, key: string): unknown {
  return key.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], config);
}

/** The keys whose values differ between two validated configs. */
export function changedKeys(a: Config, b: Config): string[] {
  return configKeys().filter((key) => JSON.stringify(configValue(a, key)) !== JSON.stringify(configValue(b, key)));
}
