import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { HandoffError, success, type Envelope } from '../../../protocol/index.js';
import { appliesLive, CONFIG_FILE, configKeys, loadConfig, parseConfig } from '../../config.js';
import { isErrno } from '../../store/errno.js';
import { writeFileAtomic } from '../../store/index.js';
import { action, usage } from '../context.js';

const AT_NEXT_START = 'at the next start: handoff daemon stop && handoff daemon';

/**
 * When the key takes effect: a live key now, in the running daemon too (it reads the file again and
 * says what it applied); any other key when the daemon starts next. No daemon is started for this.
 */
async function applies(key: string, reload: () => Promise<Envelope>): Promise<{ applies: string; reload: Record<string, unknown> | null }> {
  if (!appliesLive(key)) return { applies: AT_NEXT_START, reload: null };
  if (key === 'auto_start') return { applies: 'now', reload: null };
  const answer = await reload();
  if (answer.code === 'daemon_unreachable') return { applies: 'when the daemon starts (none is running)', reload: null };
  if (answer.error) throw new HandoffError(answer.code, `written, but the running daemon did not take it: ${answer.error.message}`, answer.error.hint);
  return { applies: 'now', reload: answer.data as Record<string, unknown> };
}

interface Moved {
  readonly workspace: string;
  readonly from: string;
  readonly to: string;
}

function renderSet(data: { key: string; value: unknown; applies: string; reload: { moves: Moved[]; at_next_start: string[] } | null }): string {
  const lines = [`${data.key} = ${JSON.stringify(data.value)}: applies ${data.applies}`];
  for (const move of data.reload?.moves ?? []) lines.push(`  ${move.workspace}: ${move.from} → ${move.to}`);
  const waiting = data.reload?.at_next_start ?? [];
  if (waiting.length > 0) lines.push(`still waiting for the next start: ${waiting.join(', ')}`);
  return lines.join('\n');
}

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
      action(async (ctx, key: string, text: string) => {
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
        const when = await applies(key, () => ctx.call({ method: 'POST', path: '/v1/config/reload', autoStart: false }));
        return success('ok', { key, value, file, ...when });
      }, renderSet),
    );
}
