import type { Stats } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { basename, join, resolve, sep } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import { isHandoffError } from '../../protocol/errors.js';
import { parseCodexRollout } from './codex-rollout.js';
import { firstLine, lastLineEnd, nextLineChunk } from './line-chunks.js';

/** Where the tail of one rollout file stands, and which workspace and session its lines belong to. */
export interface TailedFile {
  readonly offset: number;
  readonly cwd: string | null;
  readonly session_id: string | null;
}

export type TailState = Readonly<Record<string, TailedFile>>;

export interface ChunkRoute {
  readonly cwd: string | null;
  readonly session_id: string | null;
}

/** The slice of a pino logger the tail uses. */
export interface TailLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface CodexTailDeps {
  /** `${CODEX_HOME:-~/.codex}`; rollouts live under its `sessions/YYYY/MM/DD/`. */
  readonly codexHome: string;
  readonly load: () => Promise<TailState>;
  /** Must replace the saved state atomically: a restart resumes from exactly these offsets. */
  readonly save: (state: TailState) => Promise<void>;
  /**
   * Feeds whole lines to the daemon, routed by the file's remembered cwd and session, and answers
   * with the route the lines themselves named. Throws a HandoffError when it refuses them.
   */
  readonly ingest: (payload: string, route: ChunkRoute) => Promise<ChunkRoute>;
  readonly now: () => Date;
  readonly log: TailLog;
}

const ROLLOUT = /^rollout-.*\.jsonl$/;
/** One read: enough for thousands of token_count lines, small enough to parse in one go. */
const READ_LIMIT = 1 << 20;
/** How soon a file whose last line was incomplete is read again. */
const PARTIAL_LINE_RECHECK_MS = 200;
/** session_meta carries Codex's base instructions: its line can be long. */
const FIRST_LINE_LIMIT = 4 << 20;

/**
 * Tails `sessions/**\/rollout-*.jsonl` with chokidar (inotify, no polling): each change reads the
 * complete lines after the saved offset and feeds them to the daemon. Files already there when the
 * daemon first sees them start at their end, since their lines are history, not live telemetry;
 * a file that appears later is read from its start. All work runs on one chain, so offsets are
 * saved in order and `close()` can wait for it.
 */
export class CodexTail {
  private watcher: FSWatcher | null = null;
  private readonly files = new Map<string, TailedFile>();
  private readonly pending = new Set<string>();
  private readonly rechecks = new Map<string, NodeJS.Timeout>();
  /** The size at which a file last ended in a partial line. */
  private readonly partialAt = new Map<string, number>();
  private readonly lastRefusal = new Map<string, string>();
  private chain: Promise<void> = Promise.resolve();
  private ready = false;
  private readonly home: string;
  private readonly sessions: string;

  constructor(private readonly deps: CodexTailDeps) {
    this.home = resolve(deps.codexHome);
    this.sessions = join(this.home, 'sessions');
  }

  /** false when there is no CODEX_HOME to watch (Codex is not installed for this user). */
  async start(): Promise<boolean> {
    if (!(await isDirectory(this.home))) return false;
    for (const [path, file] of Object.entries(await this.deps.load())) this.files.set(path, file);
    const seen = new Set<string>();
    // CODEX_HOME rather than sessions/: Codex creates sessions/ on its first run, maybe after us.
    const watcher = watch(this.home, { ignoreInitial: false, ignored: (path, stats) => this.ignored(path, stats) });
    this.watcher = watcher;
    watcher.on('add', (path) => {
      if (!this.ready) seen.add(path);
      this.schedule(path, !this.ready);
    });
    watcher.on('change', (path) => this.schedule(path, false));
    watcher.on('unlink', (path) => this.enqueue(() => this.forget(path)));
    watcher.on('error', (error) => this.deps.log.warn({ err: error }, 'codex rollout watcher error'));
    await new Promise<void>((ready) => watcher.once('ready', () => ready()));
    this.ready = true;
    // Files that went away while the daemon was down need no offset any more.
    this.enqueue(async () => {
      for (const path of [...this.files.keys()]) if (!seen.has(path)) this.files.delete(path);
      await this.save();
    });
    await this.idle();
    this.deps.log.info({ dir: this.sessions, files: this.files.size }, 'tailing codex rollouts');
    return true;
  }

  async close(): Promise<void> {
    for (const timer of this.rechecks.values()) clearTimeout(timer);
    await this.watcher?.close();
    await this.idle();
  }

  /** Settles once every change seen so far has been read and fed. */
  idle(): Promise<void> {
    return this.chain;
  }

  private ignored(path: string, stats?: Stats): boolean {
    if (path === this.home || path === this.sessions) return false;
    if (!path.startsWith(this.sessions + sep)) return true;
    return stats?.isFile() === true && !ROLLOUT.test(basename(path));
  }

  private enqueue(work: () => Promise<void>): void {
    this.chain = this.chain.then(work).catch((error: unknown) => this.deps.log.warn({ err: error }, 'codex rollout tail failed'));
  }

  /** One queued read per file is enough: it reads everything complete at the time it runs. */
  private schedule(path: string, atStart: boolean): void {
    if (!ROLLOUT.test(basename(path)) || this.pending.has(path)) return;
    this.pending.add(path);
    this.enqueue(async () => {
      this.pending.delete(path);
      await this.drain(path, atStart);
    });
  }

  private async forget(path: string): Promise<void> {
    this.lastRefusal.delete(path);
    if (this.files.delete(path)) await this.save();
  }

  private async drain(path: string, atStart: boolean): Promise<void> {
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      // Gone between the event and the read: its unlink event follows.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    try {
      const { size } = await handle.stat();
      let file = this.files.get(path) ?? (atStart ? await this.atEnd(handle, size) : { offset: 0, cwd: null, session_id: null });
      // Shorter than our offset: the file was replaced or truncated, so all of it is new.
      if (size < file.offset) file = { ...file, offset: 0 };
      for (let chunk = await nextLineChunk(handle, file.offset, size, READ_LIMIT); chunk !== null; chunk = await nextLineChunk(handle, file.offset, size, READ_LIMIT)) {
        if (chunk.skipped > 0) this.deps.log.warn({ path, bytes: chunk.skipped }, 'skipped a rollout line longer than the read limit');
        if (chunk.text.trim() !== '') file = await this.feed(path, file, chunk.text);
        file = { ...file, offset: chunk.next };
        this.files.set(path, file);
        await this.save();
      }
      if (!this.files.has(path)) {
        this.files.set(path, file);
        await this.save();
      }
      // A line caught mid-write: its end may come in a change event the watcher coalesced with
      // this one. Look again shortly, but only while the file still grows: no idle polling.
      const now = (await handle.stat()).size;
      if (now > file.offset && now !== this.partialAt.get(path)) {
        this.partialAt.set(path, now);
        this.recheck(path);
      } else if (now === file.offset) {
        this.partialAt.delete(path);
      }
    } finally {
      await handle.close();
    }
  }

  private recheck(path: string): void {
    if (this.rechecks.has(path)) return;
    const timer = setTimeout(() => {
      this.rechecks.delete(path);
      this.schedule(path, false);
    }, PARTIAL_LINE_RECHECK_MS);
    timer.unref();
    this.rechecks.set(path, timer);
  }

  /** A file met at start: skip its history, but learn its route from the session_meta line. */
  private async atEnd(handle: FileHandle, size: number): Promise<TailedFile> {
    const offset = await lastLineEnd(handle, size, READ_LIMIT);
    const line = await firstLine(handle, size, FIRST_LINE_LIMIT);
    if (line === null) return { offset, cwd: null, session_id: null };
    try {
      const { route } = parseCodexRollout(line, { observedAt: this.deps.now() });
      return { offset, cwd: route.cwd, session_id: route.session_id };
    } catch (error) {
      if (!isHandoffError(error)) throw error;
      return { offset, cwd: null, session_id: null };
    }
  }

  private async feed(path: string, file: TailedFile, text: string): Promise<TailedFile> {
    try {
      const route = await this.deps.ingest(text, { cwd: file.cwd, session_id: file.session_id });
      this.lastRefusal.delete(path);
      // session_meta opens the file: the first route seen is the file's for good.
      return { ...file, cwd: file.cwd ?? route.cwd, session_id: file.session_id ?? route.session_id };
    } catch (error) {
      // Anything but a refusal (a journal failure) leaves the offset where it was, to be read again.
      if (!isHandoffError(error)) throw error;
      // Refused lines are consumed: reading them again would refuse them again. Said once per cause.
      if (this.lastRefusal.get(path) !== error.message) {
        this.lastRefusal.set(path, error.message);
        this.deps.log.warn({ path, code: error.code, reason: error.message }, 'codex rollout lines refused');
      }
      return file;
    }
  }

  private save(): Promise<void> {
    return this.deps.save(Object.fromEntries(this.files));
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
