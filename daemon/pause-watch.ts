import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { PauseInfo } from '../protocol/index.js';
import type { Clock } from './clock.js';
import type { Logger } from './logger.js';
import { PAUSE_FILE, workspaceDir, workspacePauseFile } from './workspaces/workspace-dir.js';

export interface PauseTarget {
  setPause(scope: 'global' | 'workspace', root: string | null, pause: PauseInfo | null): Promise<void>;
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

/** Watches the global PAUSE in the state dir and each workspace's `.session-handoff/PAUSE`. */
export class PauseWatcher {
  private watcher: FSWatcher | null = null;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly stateDir: string,
    private readonly target: PauseTarget,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    this.watcher = watch(this.stateDir, { depth: 0, ignoreInitial: true, ignored: (path) => this.irrelevant(path) });
    this.watcher.on('all', (_event, path) => this.changed(path));
    this.watcher.on('error', (error) => this.log.warn({ err: error }, 'pause watcher error'));
    await this.refresh(join(this.stateDir, PAUSE_FILE));
  }

  async watchWorkspace(root: string): Promise<void> {
    this.watcher?.add(workspaceDir(root));
    await this.refresh(workspacePauseFile(root));
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
    // Keep the watched directories themselves; of their entries only PAUSE matters.
    return name !== PAUSE_FILE && path !== this.stateDir && name !== '.session-handoff';
  }

  private changed(path: string): void {
    if (basename(path) !== PAUSE_FILE) return;
    void this.refresh(path);
  }

  private refresh(path: string): Promise<void> {
    const dir = dirname(path);
    const scope = dir === this.stateDir ? 'global' : 'workspace';
    const root = scope === 'global' ? null : dirname(dir);
    this.chain = this.chain
      .then(async () => {
        const pause = await readPause(path, this.clock);
        await this.target.setPause(scope, root, pause);
      })
      .catch((error: unknown) => this.log.error({ err: error, path }, 'could not apply a PAUSE change'));
    return this.chain;
  }
}
