import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { watch, type FSWatcher } from 'chokidar';

export interface DirWatchLog {
  warn(fields: object, message: string): void;
}

/**
 * One chokidar watch per directory (inotify, no polling), never one per file: a directory's watch
 * reports the files in it that appear, grow or go, by name. Thousands of rollout files cost as many
 * watches as there are days with sessions, so the tail scales with the directories, not the files.
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

  /**
   * Settles once the directory is watched; false when it is gone or not a directory (its parent's
   * next event brings it back). Checked first: for a missing path chokidar would watch the parent.
   */
  async add(dir: string): Promise<boolean> {
    if (this.watchers.has(dir)) return true;
    if (!(await isDirectory(dir)) || this.watchers.has(dir)) return this.watchers.has(dir);
    // Files ignored, subdirectories not entered (the caller adds each one its walk finds), changes
    // taken from the raw events of the directory's own watch: chokidar's recursive scan keeps a
    // watch per file and stats them all at once, 216 MB and no start within 30 s at 10,000 rollouts.
    const watcher = watch(dir, { depth: 0, ignoreInitial: true, ignored: (_path, stats) => stats?.isFile() === true });
    this.watchers.set(dir, watcher);
    watcher.on('raw', (_event, name, details) => {
      if ((details as { watchedPath?: unknown }).watchedPath === dir) this.onEvent(dir, typeof name === 'string' ? name : null);
    });
    // A subdirectory that is removed ends its watch; a later one of the same name is added anew.
    watcher.on('unlinkDir', (path) => void this.remove(path));
    watcher.on('error', (error) => this.log.warn({ dir, err: error }, 'directory watch failed'));
    await new Promise<void>((ready) => watcher.once('ready', () => ready()));
    return true;
  }

  async remove(dir: string): Promise<void> {
    const watcher = this.watchers.get(dir);
    this.watchers.delete(dir);
    await watcher?.close();
  }

  async close(): Promise<void> {
    const watchers = [...this.watchers.values()];
    this.watchers.clear();
    await Promise.all(watchers.map((watcher) => watcher.close()));
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
