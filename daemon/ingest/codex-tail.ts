import { open, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { parseCodexRollout, rolloutRoute, type SkippedLine } from '../../adapters/telemetry/index.js';
import { isHandoffError } from '../../protocol/errors.js';
import { DirWatches, isDirectory, listDir } from './dir-watch.js';
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

/**
 * `on`: CODEX_HOME exists and is watched. `waiting`: it does not exist yet; its parent is watched and
 * the tail starts when Codex creates it. `off`: not even its parent exists, so nothing can be watched.
 */
export type TailMode = 'on' | 'waiting' | 'off';

export interface TailStatus {
  readonly state: TailMode;
  readonly codex_home: string;
  /** Files whose offset is kept: read at least once, or resumed from the saved offsets. */
  readonly tailed_files: number;
  readonly watched_dirs: number;
}

export interface CodexTailDeps {
  /** `${CODEX_HOME:-~/.codex}`; rollouts live under its `sessions/YYYY/MM/DD/`. */
  readonly codexHome: string;
  readonly load: () => Promise<TailState>;
  /** Must replace the saved state atomically: a restart resumes from exactly these offsets. */
  readonly save: (state: TailState) => Promise<void>;
  /**
   * Feeds whole lines to the daemon, routed by the file's cwd and session, and answers with the
   * lines it could not read. Throws a HandoffError when it refuses the whole batch.
   */
  readonly ingest: (payload: string, route: ChunkRoute) => Promise<{ readonly skipped: readonly SkippedLine[] }>;
  readonly now: () => Date;
  readonly log: TailLog;
  /**
   * Runs after a directory was listed and before its entries are taken in: the seam where a test
   * creates a directory or a rollout while the scan is between listing and handling.
   */
  readonly afterListing?: (dir: string) => Promise<void>;
}

const ROLLOUT = /^rollout-.*\.jsonl$/;
const isRollout = (name: string): boolean => ROLLOUT.test(name);
/** One read: enough for thousands of token_count lines, small enough to parse in one go. */
const READ_LIMIT = 1 << 20;
/** How soon a file whose last line was incomplete is read again. */
const PARTIAL_LINE_RECHECK_MS = 200;
/** session_meta carries Codex's base instructions: its line can be long. */
const FIRST_LINE_LIMIT = 4 << 20;
/**
 * Offsets are written at most this often, in one record: an active session appends a line a second,
 * and a write per line would cost more than the reading. Losing the last interval to a crash
 * replays a few lines, which the daemon recognises as already recorded.
 */
const SAVE_DELAY_MS = 500;

const NEW_FILE: TailedFile = Object.freeze({ offset: 0, cwd: null, session_id: null });

/**
 * Tails `CODEX_HOME/sessions/**\/rollout-*.jsonl` with one watch per directory (inotify, no polling):
 * each change reads the complete lines after the saved offset and feeds them to the daemon. Files
 * already there when the daemon starts are history: only their size is noted, and nothing is read
 * until they grow. A file that appears later is read from its start. All reads run on one chain.
 */
export class CodexTail {
  private readonly watches: DirWatches;
  private readonly files = new Map<string, TailedFile>();
  /**
   * Files met at start and not read since: where their history ends (their size then, or the saved
   * offset when nothing was added). Kept out of the offsets record, so the record holds the files that
   * are live, not every file Codex ever wrote; and only the offset, no object and no route per file at
   * rest: the route is read again from session_meta if the file ever grows (docs/performance/daemon.md).
   */
  private readonly history = new Map<string, number>();
  private readonly pending = new Set<string>();
  private readonly rechecks = new Map<string, NodeJS.Timeout>();
  /** The size at which a file last ended in a partial line. */
  private readonly partialAt = new Map<string, number>();
  private readonly lastRefusal = new Map<string, string>();
  private chain: Promise<void> = Promise.resolve();
  private saveTimer: NodeJS.Timeout | null = null;
  private saving: Promise<void> = Promise.resolve();
  private mode: TailMode = 'off';
  private closed = false;
  private readonly home: string;
  private readonly parent: string;
  private readonly sessions: string;

  constructor(private readonly deps: CodexTailDeps) {
    this.home = resolve(deps.codexHome);
    this.parent = dirname(this.home);
    this.sessions = join(this.home, 'sessions');
    this.watches = new DirWatches((dir, name) => this.onEvent(dir, name), deps.log);
  }

  status(): TailStatus {
    return { state: this.mode, codex_home: this.home, tailed_files: this.files.size, watched_dirs: this.watches.size };
  }

  /** Watches CODEX_HOME, or its parent until Codex creates it. Settles once the first scan is done. */
  async start(): Promise<TailMode> {
    const saved = await this.deps.load();
    for (const path in saved) this.files.set(path, saved[path] as TailedFile);
    if (await isDirectory(this.home)) {
      await this.begin(true);
    } else if (await this.watches.add(this.parent)) {
      this.mode = 'waiting';
      // Created between the check and the watch: the watch saw nothing, so look once more.
      if (await isDirectory(this.home)) await this.begin(false);
    }
    await this.idle();
    return this.mode;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.rechecks.values()) clearTimeout(timer);
    await this.watches.close();
    await this.idle();
    await this.flush();
  }

  /** Settles once every change seen so far has been read and fed. */
  async idle(): Promise<void> {
    for (let seen: Promise<void> | null = null; seen !== this.chain;) {
      seen = this.chain;
      await seen;
    }
  }

  private async begin(atStart: boolean): Promise<void> {
    const before = this.mode;
    if (before === 'on') return;
    this.mode = 'on';
    if (!(await this.watches.add(this.home))) {
      this.mode = before;
      return;
    }
    await this.watches.remove(this.parent);
    this.enqueue(async () => {
      await this.scan(this.sessions, atStart);
      this.deps.log.info({ dir: this.sessions, files: this.files.size + this.history.size, watched_dirs: this.watches.size }, 'tailing codex rollouts');
    });
  }

  /**
   * Watches every directory under `root` and takes note of its rollouts, one directory at a time. At
   * start they are history (resumed only when an offset was saved); in a directory that appeared
   * later every file is new.
   */
  private async scan(root: string, atStart: boolean): Promise<void> {
    const present = new Set<string>();
    const pending = [root];
    for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
      // The watch first, then the listing: what appears before the watch is ready is listed, what
      // appears after it raises an event. Listed first, a day directory Codex created in between was
      // never seen (1 run in 7 in a fresh CODEX_HOME). Seen twice is harmless: reads are by offset.
      if (!(await this.watches.add(dir))) continue;
      const entries = await listDir(dir);
      if (entries === null) continue;
      await this.deps.afterListing?.(dir);
      for (const entry of entries) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) {
          pending.push(path);
        } else if (entry.isFile() && isRollout(entry.name)) {
          present.add(path);
          if (atStart) await this.noteAtStart(path);
          else this.schedule(path);
        }
      }
    }
    if (!atStart) return;
    // Files that went away while the daemon was down need no offset any more.
    for (const path of [...this.files.keys()]) {
      if (!present.has(path)) {
        this.files.delete(path);
        this.markDirty();
      }
    }
  }

  /**
   * A file met at start: one stat. Resumed from its saved offset only when it changed while the
   * daemon was down; otherwise its size is history, read from only once the file grows.
   */
  private async noteAtStart(path: string): Promise<void> {
    let size: number;
    try {
      size = (await stat(path)).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    const saved = this.files.get(path);
    if (saved === undefined) {
      this.history.set(path, size);
    } else if (size === saved.offset) {
      this.history.set(path, size);
      this.files.delete(path);
      this.markDirty();
    } else {
      this.schedule(path);
    }
  }

  private onEvent(dir: string, name: string | null): void {
    if (this.closed || name === null) return;
    const path = join(dir, name);
    if (dir === this.parent) {
      if (path === this.home) this.enqueue(async () => ((await isDirectory(this.home)) ? this.begin(false) : undefined));
    } else if (dir === this.home) {
      if (path === this.sessions) this.enqueue(() => this.scan(this.sessions, false));
    } else if (isRollout(name)) {
      this.schedule(path);
    } else if (path.startsWith(this.sessions + sep) && !this.watches.has(path)) {
      // A new year, month or day directory: watch it and read what was written into it already.
      this.enqueue(async () => ((await isDirectory(path)) ? this.scan(path, false) : undefined));
    }
  }

  private enqueue(work: () => Promise<void>): void {
    this.chain = this.chain.then(work).catch((error: unknown) => this.deps.log.warn({ err: error }, 'codex rollout tail failed'));
  }

  /** One queued read per file is enough: it reads everything complete at the time it runs. */
  private schedule(path: string): void {
    if (this.closed || this.pending.has(path)) return;
    this.pending.add(path);
    this.enqueue(async () => {
      this.pending.delete(path);
      await this.drain(path);
    });
  }

  private forget(path: string): void {
    this.lastRefusal.delete(path);
    this.history.delete(path);
    this.partialAt.delete(path);
    if (this.files.delete(path)) this.markDirty();
  }

  private async drain(path: string): Promise<void> {
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      // Gone: a removed file needs no offset.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return this.forget(path);
      throw error;
    }
    try {
      const { size } = await handle.stat();
      let file = this.files.get(path);
      if (file === undefined) {
        const past = this.history.get(path);
        // A file from before the start that has not grown: nothing to read, nothing to remember.
        if (past !== undefined && size === past) return;
        // Shorter than its history: replaced or truncated, so all of it is new.
        file = past === undefined || size < past ? NEW_FILE : await this.afterHistory(handle, past, size);
        this.history.delete(path);
      }
      // Shorter than our offset: the file was replaced or truncated, so all of it is new.
      if (size < file.offset) file = { ...file, offset: 0 };
      for (
        let chunk = await nextLineChunk(handle, file.offset, size, READ_LIMIT);
        chunk !== null;
        chunk = await nextLineChunk(handle, file.offset, size, READ_LIMIT)
      ) {
        if (chunk.skipped > 0) this.deps.log.warn({ path, bytes: chunk.skipped }, 'skipped a rollout line longer than the read limit');
        if (chunk.text.trim() !== '') {
          // The route is the file's, kept with its offset: learned before the batch is sent, so a
          // refused batch cannot lose it (session_meta opens the file; the first route seen stays).
          const route = rolloutRoute(chunk.text);
          file = { ...file, cwd: file.cwd ?? route.cwd, session_id: file.session_id ?? route.session_id };
          await this.feed(path, file, chunk.text, chunk.next);
        }
        file = { ...file, offset: chunk.next };
        this.files.set(path, file);
        this.markDirty();
      }
      if (!this.files.has(path)) {
        this.files.set(path, file);
        this.markDirty();
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
      this.schedule(path);
    }, PARTIAL_LINE_RECHECK_MS);
    timer.unref();
    this.rechecks.set(path, timer);
  }

  /** A file from before the start that grew: skip its history, but know its route (from session_meta). */
  private async afterHistory(handle: FileHandle, past: number, size: number): Promise<TailedFile> {
    const offset = await lastLineEnd(handle, Math.min(past, size), READ_LIMIT);
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

  private async feed(path: string, file: TailedFile, text: string, end: number): Promise<void> {
    try {
      const { skipped } = await this.deps.ingest(text, { cwd: file.cwd, session_id: file.session_id });
      this.lastRefusal.delete(path);
      if (skipped.length > 0) this.deps.log.warn({ path, before_offset: end, skipped }, 'codex rollout lines skipped; the others counted');
    } catch (error) {
      // Anything but a refusal (a journal failure) leaves the offset where it was, to be read again.
      if (!isHandoffError(error)) throw error;
      // Refused lines are consumed: reading them again would refuse them again. Said once per cause.
      if (this.lastRefusal.get(path) !== error.message) {
        this.lastRefusal.set(path, error.message);
        this.deps.log.warn({ path, code: error.code, reason: error.message }, 'codex rollout lines refused');
      }
    }
  }

  private markDirty(): void {
    if (this.saveTimer !== null || this.closed) return;
    this.saveTimer = setTimeout(() => void this.flush(), SAVE_DELAY_MS);
    this.saveTimer.unref();
  }

  /** Writes the one offsets record, in order after any write still running. */
  private flush(): Promise<void> {
    if (this.saveTimer !== null) clearTimeout(this.saveTimer);
    this.saveTimer = null;
    const snapshot = Object.fromEntries(this.files);
    this.saving = this.saving.then(() => this.deps.save(snapshot)).catch((error: unknown) => this.deps.log.warn({ err: error }, 'codex offsets not saved'));
    return this.saving;
  }
}
