import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../logger.js';
import { writeFileAtomic } from '../store/index.js';
import type { TailedFile, TailState } from './codex-tail.js';

export const CODEX_OFFSETS_FILE = 'codex-offsets.json';
const VERSION = 1;

function isTailedFile(value: unknown): value is TailedFile {
  if (typeof value !== 'object' || value === null) return false;
  const { offset, cwd, session_id: session } = value as Record<string, unknown>;
  return (
    Number.isSafeInteger(offset) && (offset as number) >= 0 && (cwd === null || typeof cwd === 'string') && (session === null || typeof session === 'string')
  );
}

export const GEMINI_OFFSETS_FILE = 'gemini-offsets.json';
export const QWEN_OFFSETS_FILE = 'qwen-offsets.json';

/**
 * Where each rollout file was read up to, so a restart resumes instead of replaying. Losing the file
 * costs little — files then start at their end, as on a first run — so a damaged one is reported and
 * replaced on the next save rather than stopping the daemon.
 */
export function codexOffsetsStore(stateDir: string, log: Logger) {
  return offsetsStore(join(stateDir, CODEX_OFFSETS_FILE), log);
}

/** The same record for another tail (Gemini CLI's telemetry outfiles), in a file of its own. */
export function offsetsStore(path: string, log: Logger) {
  return {
    async load(): Promise<TailState> {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
        throw error;
      }
      try {
        const saved = JSON.parse(text) as { version?: unknown; files?: unknown };
        if (saved.version !== VERSION || typeof saved.files !== 'object' || saved.files === null) throw new Error(`not a version ${VERSION} offsets record`);
        return Object.fromEntries(Object.entries(saved.files).filter((entry): entry is [string, TailedFile] => isTailedFile(entry[1])));
      } catch (error) {
        log.warn({ path, err: error }, 'an offsets file is unreadable; the files it named are tailed from their end');
        return {};
      }
    },

    save(files: TailState): Promise<void> {
      return writeFileAtomic(path, `${JSON.stringify({ version: VERSION, files })}\n`, 0o600);
    },
  };
}
