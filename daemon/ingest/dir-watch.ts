import { statSync, watch, type Dirent, type FSWatcher } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface DirWatchLog {
  warn(fields: object, message: string): void;
}

/**
 * One watch per directory (inotify, no polling), never one per file: a directory's watch reports the
 * files in it that appear, grow or go, by name. Thousands of rollout files cost as many watches as
 * there are days with sessions, so the tail scales with the directories, not the files. Node's own
 * `fs.watch`, not chokidar: the tails take only the raw events, and chokidar's start of a watch still
 * lists and stats every file of the directory and keeps an entry for each (12 MB of RSS at 10,000
 * rollouts; docs/performance/daemon.md).
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

  /** True once the directory is watched; false when it is gone or not a directory (its parent's next event brings it back). */
  async add(dir: string): Promise<boolean> {
    if (this.watchers.has(dir)) return true;
    if (!(await isDirectory(dir)) || this.watchers.has(dir)) return this.watchers.has(dir);
    let watcher: FSWatcher;
    try {
      watcher = watch(dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return false;
      throw error;
    }
    this.watchers.set(dir, watcher);
    watcher.on('change', (_event, name) => {
      const entry = typeof name === 'string' ? name : null;
      // A subdirectory that went away ends its watch (its inotify watch died with it), before anyone
      // hears of the change: a later directory of the same name is then added anew.
      if (entry !== null) this.dropIfGone(join(dir, entry));
      this.onEvent(dir, entry);
    });
    watcher.on('error', (error) => {
      this.log.warn({ dir, err: error }, 'directory watch failed');
      void this.remove(dir);
    });
    return true;
  }

  private dropIfGone(path: string): void {
    const watcher = this.watchers.get(path);
    if (watcher === undefined || statSync(path, { throwIfNoEntry: false })?.isDirectory() === true) return;
    this.watchers.delete(path);
    watcher.close();
  }

  async remove(dir: string): Promise<void> {
    const watcher = this.watchers.get(dir);
    this.watchers.delete(dir);
    watcher?.close();
  }

  async close(): Promise<void> {
    const watchers = [...this.watchers.values()];
    this.watchers.clear();
    for (const watcher of watchers) watcher.close();
  }
}

export async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw error;
  }
}

/** The entries of a directory, or null when it is gone or not a directory. */
export async function listDir(dir: string): Promise<Dirent[] | null> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw error;
  }
}
