import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { HandoffError, success } from '../../../protocol/index.js';
import { ConfigSchema } from '../../../schemas/index.js';
import { CONFIG_FILE, loadConfig, parseConfig } from '../../config.js';
import { isErrno } from '../../store/errno.js';
import { writeFileAtomic } from '../../store/index.js';
import { action, usage } from '../context.js';

type Schema = { properties?: Record<string, Schema> };

/** Every settable key, nested ones as `parent.child`, from the schema that validates the file. */
function configKeys(schema: Schema = ConfigSchema as Schema, prefix = ''): string[] {
  return Object.entries(schema.properties ?? {}).flatMap(([name, child]) => (child.properties ? configKeys(child, `${prefix}${name}.`) : [`${prefix}${name}`]));
}

/** Read by each CLI command (auto-start); every other key is read once, when the daemon starts. */
const APPLIED_NOW = new Set(['auto_start']);
const applies = (key: string) => (APPLIED_NOW.has(key) ? 'now' : 'at the next daemon start (`handoff daemon stop`; the next command starts it again)');

/** A key's path; `get` also takes a group (`pressure`). */
function checkedKey(key: string, group = false): string[] {
  const known = configKeys().includes(key) || (group && configKeys().some((k) => k.startsWith(`${key}.`)));
  if (!known) usage(`'${key}' is not a config key`, `one of: ${configKeys().join(', ')} (docs/configuration.md)`);
  return key.split('.');
}

/** The value as JSON when it parses (numbers, true, null), else the text itself (a command line). */
function parseValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function readRaw(path: string): Promise<Record<string, unknown>> {
  try {
    const raw: unknown = JSON.parse(await readFile(path, 'utf8'));
    if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) return raw as Record<string, unknown>;
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return {};
  }
  throw new HandoffError('invalid_config', `${path} is not a JSON object`, `fix or remove ${path} by hand; nothing was changed`);
}

export function registerConfig(program: Command): void {
  const config = program.command('config').description('read or change <state dir>/config.json, validated against its schema (docs/configuration.md)');
  config
    .command('get')
    .description('the value of a key (defaults filled in), or the whole config without a key')
    .argument('[key]', 'a key such as pressure.prepare_percent, or a group such as pressure')
    .action(
      action(
        async (ctx, key: string | undefined) => {
          const path = key === undefined ? [] : checkedKey(key, true);
          const value = path.reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], await loadConfig(ctx.stateDir));
          return success('ok', { key: key ?? null, value });
        },
        (data: { value: unknown }) => (typeof data.value === 'string' ? data.value : JSON.stringify(data.value, null, 2)),
      ),
    );
  config
    .command('set')
    .description('set one key: the whole file is validated first and written crash-safe; the answer says when it applies')
    .argument('<key>', 'a key such as pressure.prepare_percent')
    .argument('<value>', 'JSON (82, true, null, "text"), or plain text for a string')
    .action(
      action(
        async (ctx, key: string, text: string) => {
          const path = checkedKey(key);
          const file = join(ctx.stateDir, CONFIG_FILE);
          const raw = await readRaw(file);
          const value = parseValue(text);
          let node = raw;
          for (const part of path.slice(0, -1)) {
            const next = node[part];
            node = (node[part] = next !== null && typeof next === 'object' && !Array.isArray(next) ? next : {}) as Record<string, unknown>;
          }
          node[path.at(-1) as string] = value;
          // ajv fills defaults into what it validates: the copy, so the file keeps only the keys the user set.
          parseConfig(structuredClone(raw), file);
          await mkdir(ctx.stateDir, { recursive: true, mode: 0o700 });
          await writeFileAtomic(file, `${JSON.stringify(raw, null, 2)}\n`, 0o600);
          return success('ok', { key, value, file, applies: applies(key) });
        },
        (data: { key: string; value: unknown; applies: string }) => `${data.key} = ${JSON.stringify(data.value)}: applies ${data.applies}`,
      ),
    );
}
