import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileCreateOnce } from '../store/index.js';
import { cycleDir, refuseLinkedDirs } from './package-writer.js';

/** What `handoff cancel` ended, as the journal's CANCEL outcome says it. */
export interface AbandonedRecord {
  readonly cycle: string;
  readonly leg: 'out' | 'return';
  readonly at: string;
  readonly reason: string | null;
  /** The drain step it had reached (null: it waited for the agent, or had finished). */
  readonly step: string | null;
  readonly blocked: string | null;
  /** The checkpoint ref the drain made, kept (never deleted by a cancel). */
  readonly kept_ref: string | null;
}

const stamp = (at: string): string => at.replace(/[-:.]/g, '');

/**
 * Beside the cycle's package, create-once: `abandoned.json` for the out leg, `return/abandoned-<time>.json`
 * for each return leg ended (a holder may return again). The journal's CANCEL record is the durable
 * one; this file is for people and `handoff list/show`.
 */
export async function writeAbandoned(root: string, record: AbandonedRecord): Promise<string> {
  const dir = record.leg === 'out' ? cycleDir(root, record.cycle) : join(cycleDir(root, record.cycle), 'return');
  const path = join(dir, record.leg === 'out' ? 'abandoned.json' : `abandoned-${stamp(record.at)}.json`);
  // Like a package, only into real directories of the repository: a planted link is refused, not followed.
  await refuseLinkedDirs(root, dir);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  await refuseLinkedDirs(root, dir);
  await writeFileCreateOnce(path, `${JSON.stringify(record, null, 2)}\n`, 0o644);
  return path;
}

/** The abandoned records of a cycle, out leg first; unreadable ones are named, not hidden. */
export async function readAbandoned(root: string, cycle: string): Promise<(AbandonedRecord | { readonly path: string; readonly error: string })[]> {
  const paths: string[] = [join(cycleDir(root, cycle), 'abandoned.json')];
  const returnDir = join(cycleDir(root, cycle), 'return');
  const names = await readdir(returnDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return [] as string[];
    throw error;
  });
  paths.push(
    ...names
      .filter((name) => /^abandoned-[0-9TZ]+\.json$/.test(name))
      .sort()
      .map((name) => join(returnDir, name)),
  );
  const found = [];
  for (const path of paths) {
    const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (text === null) continue;
    try {
      found.push(JSON.parse(text) as AbandonedRecord);
    } catch (error) {
      found.push({ path, error: (error as Error).message });
    }
  }
  return found;
}
