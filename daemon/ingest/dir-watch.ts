import { watch, type FSWatcher } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** What a directory walk found: the files under it, and its directories (itself included). */
export interface DirWalk {
  readonly dirs: string[];
  readonly files: string[];
}

export interface DirWatchLog {
  warn(fields: object, message: string): void;
}

/**
 * One `fs.watch` per directory, never one per file: a directory watch reports the files in it that
 * appear, grow or go, by name. Thousands of rollout files cost as many watches as there are days
 * with sessions, so the tail scales with the directories, not with the files.
 */
export class DirWatches {
  private readonly watchers = new Map<string, FSWatcher>();

  constructor(
    private readonly onEvent: (dir: string, name: string | null) => void,
    private readonly log: DirWatchLog,
  ) {}

  get size(): number {
    return this.watchers.size;
  }

  has(dir: string): boolean {
    return this.watchers.has(dir);
  }

  /** false when the directory is gone or not a directory: its parent's next event brings it back. */
  add(dir: string): boolean {
    if (this.watchers.has(dir)) return true;
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, { persistent: false }, (_event, name) => this.onEvent(dir, name === null ? null : String(name)));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return false;
      throw error;
    }
    // A watched directory that is removed ends its watch; a later one of the same name is added anew.
    watcher.on('error', (error) => {
      this.log.warn({ dir, err: error }, 'directory watch ended');
      this.remove(dir);
    });
    this.watchers.set(dir, watcher);
    return true;
  }

  remove(dir: string): void {
    this.watchers.get(dir)?.close();
    this.watchers.delete(dir);
  }

  close(): void {
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }
}

/** Every directory and file under `root` (which is included in `dirs`); a vanished entry is skipped. */
export async function walk(root: string, keepFile: (name: string) => boolean): Promise<DirWalk> {
  const dirs: string[] = [];
  const files: string[] = [];
  const pending = [root];
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') continue;
      throw error;
    }
    dirs.push(dir);
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isFile() && keepFile(entry.name)) files.push(path);
    }
  }
  return { dirs, files };
}
