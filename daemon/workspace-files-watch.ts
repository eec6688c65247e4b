import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { PauseInfo } from '../protocol/index.js';
import type { Clock } from './clock.js';
import type { Logger } from './logger.js';
import { CAPSULE_FILE } from './capsule/capsule-file.js';
import { PAUSE_FILE, workspaceDir, workspacePauseFile } from './workspaces/workspace-dir.js';

export interface WatchTarget {
  setPause(scope: 'global' | 'workspace', root: string | null, pause: PauseInfo | null): Promise<void>;
  /** The agent wrote `.session-handoff/capsule.json` itself (not through `handoff capsule set`). */
  capsuleChanged(root: string): Promise<void>;
}

/** The kill switch is a file: its presence pauses, its removal resumes, whoever creates it. */
export async function readPause(path: string, clock: Clock): Promise<PauseInfo | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    // Unreadable but present still pauses: when in doubt, stop.
    text = '';
  }
  const reason = text.split(/\r?\n/)[0]?.trim().slice(0, 500) ?? '';
  return { reason: reason === '' ? null : reason, since: new Date(clock.now()).toISOString(), path };
}

/**
 * Watches the global PAUSE in the state dir and, in each workspace's `.session-handoff/`, the PAUSE
 * file and the agent's capsule. Events touch nothing else; the directories are watched one level deep.
 */
export class WorkspaceFilesWatcher {
  private watcher: FSWatcher | null = null;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly stateDir: string,
    private readonly target: WatchTarget,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    this.watcher = watch(this.stateDir, {
      depth: 0,
      ignoreInitial: true,
      ignored: (path) => this.irrelevant(path),
      // An agent may write its capsule in several writes: the change is read once the size has settled,
      // never half-written (a half file read last would stand as a parse error).
      awaitWriteFinish: { stabilityThreshold: 100, pollInterval: 25 },
    });
    this.watcher.on('all', (_event, path) => this.changed(path));
    this.watcher.on('error', (error) => this.log.warn({ err: error }, 'pause watcher error'));
    await this.applyPauseFile(join(this.stateDir, PAUSE_FILE));
  }

  async watchWorkspace(root: string): Promise<void> {
    this.watcher?.add(workspaceDir(root));
    await this.applyPauseFile(workspacePauseFile(root));
  }

  async close(): Promise<void> {
    await this.watcher?.close();
    await this.chain;
  }

  /** Settles after every change seen so far has been applied. */
  idle(): Promise<void> {
    return this.chain;
  }

  private irrelevant(path: string): boolean {
    const name = basename(path);
    // Keep the watched directories themselves; of their entries only PAUSE and the capsule matter.
    return name !== PAUSE_FILE && name !== CAPSULE_FILE && path !== this.stateDir && name !== '.session-handoff';
  }

  private changed(path: string): void {
    if (basename(path) === PAUSE_FILE) void this.applyPauseFile(path);
    else if (basename(path) === CAPSULE_FILE && dirname(path) !== this.stateDir) this.enqueue(path, () => this.target.capsuleChanged(dirname(dirname(path))));
  }

  /**
   * Reads the PAUSE file at `path` and applies what it says. The file's own events and `handoff
   * pause|unpause` (which write the file first) both come through here, one at a time: a read that
   * raced a command is applied before the command's own re-read, so the last word is the file as it is.
   */
  applyPauseFile(path: string): Promise<PauseInfo | null> {
    const dir = dirname(path);
    const scope = dir === this.stateDir ? 'global' : 'workspace';
    const root = scope === 'global' ? null : dirname(dir);
    return this.enqueue(path, async () => {
      const pause = await readPause(path, this.clock);
      await this.target.setPause(scope, root, pause);
      return pause;
    });
  }

  /** One change at a time, in the order seen, so a quick create-then-remove ends as removed. */
  private enqueue<T>(path: string, apply: () => Promise<T>): Promise<T> {
    const run = this.chain.then(apply);
    // The queue goes on after a failure (logged); whoever asked for this change still sees it fail.
    this.chain = run.then(
      () => undefined,
      (error: unknown) => this.log.error({ err: error, path }, 'could not apply a file change'),
    );
    return run;
  }
}
