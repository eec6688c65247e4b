import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { clinePluginCommands, clinePluginState } from '../../adapters/agents/index.js';
import { byCodeUnits } from '../../protocol/code-unit-order.js';
import { isErrno } from '../store/errno.js';

/** How much of the end of each Cline log doctor reads: the last runs, never the whole history. */
const LOG_TAIL_BYTES = 256 * 1024;

/**
 * Cline 3.0.x gives its plugin sandbox 4 s to load the plugins (`CLINE_PLUGIN_IMPORT_TIMEOUT_MS`
 * overrides it), then logs "plugin loading failed; continuing without plugins" and runs unguarded.
 * On a loaded machine the sandbox's start alone can take longer.
 */
export const CLINE_LOAD_STEP =
  'set CLINE_PLUGIN_IMPORT_TIMEOUT_MS=30000 in the environment Cline starts from (Cline gives its plugins 4 s to load, then runs without them), stop its background hub (`cline-hub-daemon`) so it restarts with it, and run Cline again';

const nonEmpty = (value: string | undefined): string | undefined => (value === undefined || value.trim() === '' ? undefined : value.trim());

/** Cline's data dir, by its own rules: `$CLINE_DATA_DIR`, else `data` in `$CLINE_DIR` or `~/.cline`. */
export function clineDataDir(env: NodeJS.ProcessEnv, home: string): string {
  return nonEmpty(env['CLINE_DATA_DIR']) ?? join(nonEmpty(env['CLINE_DIR']) ?? join(home, '.cline'), 'data');
}

async function tail(path: string): Promise<string> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if (isErrno(error, 'ENOENT', 'ENOTDIR')) return '';
    throw error;
  }
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, LOG_TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } finally {
    await handle.close();
  }
}

interface LogLine {
  readonly time: string;
  readonly msg: string;
}

function linesOf(text: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const raw of text.split('\n')) {
    if (!raw.includes('"msg"')) continue;
    try {
      const record = JSON.parse(raw) as { time?: unknown; msg?: unknown };
      if (typeof record.time === 'string' && typeof record.msg === 'string') lines.push({ time: record.time, msg: record.msg });
    } catch (error) {
      // A torn first line of the tail, or a line Cline did not write as JSON.
      if (!(error instanceof SyntaxError)) throw error;
    }
  }
  return lines;
}

/**
 * Why Cline ran without the plugin, from its own logs (the CLI's and its hub's): the newest "plugin
 * loading failed" since the plugin was written, unless a later run started after it. Null when its
 * logs say nothing against it (Cline logs no success).
 */
export async function clineLoadFailure(env: NodeJS.ProcessEnv, home: string, pluginWritten: Date): Promise<string | null> {
  const logs = join(clineDataDir(env, home), 'logs');
  const lines = (await Promise.all(['cline.log', 'hub-daemon.log'].map(async (file) => linesOf(await tail(join(logs, file))))))
    .flat()
    .filter((line) => new Date(line.time) >= pluginWritten)
    .sort((a, b) => byCodeUnits(a.time, b.time));
  const failed = lines.findLast((line) => line.msg.startsWith('plugin loading failed'));
  if (failed === undefined) return null;
  const laterRun = lines.some((line) => line.time > failed.time && line.msg === 'CLI run started');
  return laterRun ? null : `Cline's last run logged "${failed.msg}" (${failed.time})`;
}

export interface ClinePluginFacts {
  /** A plugin file of ours is there (as written or edited since). */
  readonly installed: boolean;
  readonly edited: boolean;
  readonly commands: readonly string[];
  /** Why Cline ran without it, from its logs, or null. */
  readonly loadFailure: string | null;
}

/** What doctor knows of the plugin at `path`: whether it is ours, what it starts, and whether Cline's logs say it failed to load. */
export async function clinePluginFacts(path: string, text: string | null, env: NodeJS.ProcessEnv, home: string): Promise<ClinePluginFacts> {
  const state = text === null ? 'other' : clinePluginState(text);
  if (text === null || state === 'other') return { installed: false, edited: false, commands: [], loadFailure: null };
  const written = (await stat(path)).mtime;
  return { installed: true, edited: state === 'edited', commands: clinePluginCommands(text), loadFailure: await clineLoadFailure(env, home, written) };
}
