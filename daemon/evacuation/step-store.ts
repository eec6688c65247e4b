import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { HandoffError } from '../../protocol/index.js';
import { writeFileAtomic } from '../store/index.js';

/**
 * Bulky step results (the inspected repository, validation output) live in the state dir, one
 * file per step and revision; the journal keeps their sha256, so a resumed drain can trust them.
 */
export function createStepStore(stateDir: string) {
  const dirOf = (cycle: string) => join(stateDir, 'drains', cycle);
  return {
    async save(cycle: string, name: string, value: unknown): Promise<string> {
      const text = `${JSON.stringify(value, null, 2)}\n`;
      await mkdir(dirOf(cycle), { recursive: true, mode: 0o700 });
      await writeFileAtomic(join(dirOf(cycle), `${name}.json`), text, 0o600);
      return createHash('sha256').update(text).digest('hex');
    },
    /** The saved value, or null when this step never saved it (a first run, not a resume). */
    async find<T>(cycle: string, name: string): Promise<T | null> {
      const text = await readFile(join(dirOf(cycle), `${name}.json`), 'utf8').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return null;
        throw error;
      });
      return text === null ? null : (JSON.parse(text) as T);
    },
    /** Where a step keeps a file of its own that is not JSON (the snapshot's scratch index), with its directory made. */
    async path(cycle: string, name: string): Promise<string> {
      await mkdir(dirOf(cycle), { recursive: true, mode: 0o700 });
      return join(dirOf(cycle), name);
    },
    /** That file's path while it is there; null once dropped, or when a crash came before it was kept. */
    async kept(cycle: string, name: string): Promise<string | null> {
      const path = join(dirOf(cycle), name);
      return (await stat(path).catch(() => null))?.isFile() === true ? path : null;
    },
    async drop(cycle: string, name: string): Promise<void> {
      await rm(join(dirOf(cycle), name), { force: true });
    },
    /** Forgets a saved value, so the next run makes it again from fresh input. */
    async forget(cycle: string, name: string): Promise<void> {
      await rm(join(dirOf(cycle), `${name}.json`), { force: true });
    },
    async load<T>(cycle: string, name: string, sha256: string | null): Promise<T> {
      const path = join(dirOf(cycle), `${name}.json`);
      const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
        throw new HandoffError(
          'corrupt_record',
          `the drain record ${path} is missing (${error.code ?? 'unreadable'})`,
          'inspect the state dir; the journal says this step finished',
        );
      });
      if (sha256 !== null && createHash('sha256').update(text).digest('hex') !== sha256) {
        throw new HandoffError(
          'corrupt_record',
          `the drain record ${path} does not match the sha256 in the journal`,
          'inspect it before retrying; nothing was deleted',
        );
      }
      return JSON.parse(text) as T;
    },
  };
}

export type StepStore = ReturnType<typeof createStepStore>;
