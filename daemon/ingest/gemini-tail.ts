import { open, stat, type FileHandle } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { splitJsonObjects } from '../../adapters/telemetry/json-stream.js';
import { isHandoffError } from '../../protocol/errors.js';
import type { TailedFile, TailLog, TailState } from './codex-tail.js';
import { DirWatches } from './dir-watch.js';

/** One configured outfile and the repository its records belong to (they name a session, not a directory). */
export interface GeminiOutfile {
  readonly outfile: string;
  readonly repo: string;
}

export interface GeminiTailDeps {
  readonly outfiles: readonly GeminiOutfile[];
  readonly load: () => Promise<TailState>;
  /** Must replace the saved state atomically: a restart resumes from exactly these offsets. */
  readonly save: (state: TailState) => Promise<void>;
  /** Feeds whole records to the daemon for `repo`; throws a HandoffError when it refuses them. */
  readonly ingest: (payload: string, repo: string) => Promise<void>;
  readonly log: TailLog;
}

export interface GeminiTailStatus {
  readonly outfiles: number;
  readonly watched_dirs: number;
}

/** One read: dozens of records; Gemini's largest (inference details with the system prompt) are ~100 KB. */
const READ_LIMIT = 4 << 20;
const PARTIAL_RECHECK_MS = 200;
const SAVE_DELAY_MS = 500;
const OPEN_BRACE_AT_LINE_START = Buffer.from('\n{');

/**
 * Tails Gemini CLI's telemetry outfiles (`telemetry.outfile`: one `JSON.stringify(record, null, 2)`
 * after another) with one watch per directory: each change reads the whole records after the saved
 * offset and feeds them to the daemon, so a 429 reaches it without anyone running a command. What a
 * file held when the daemon first saw it is history and is not read. All reads run on one chain.
 */
export class GeminiTail {
  private readonly watches: DirWatches;
  private readonly byPath = new Map<string, GeminiOutfile>();
  private readonly files = new Map<string, TailedFile>();
  /** Files whose offset came from their size, not a record end: the first read skips to a record start. */
  private readonly unaligned = new Set<string>();
  private readonly pending = new Set<string>();
  private readonly rechecks = new Map<string, NodeJS.Timeout>();
  private readonly partialAt = new Map<string, number>();
  private chain: Promise<void> = Promise.resolve();
  private saveTimer: NodeJS.Timeout | null = null;
  private saving: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly deps: GeminiTailDeps) {
    for (const entry of deps.outfiles) this.byPath.set(resolve(entry.outfile), { outfile: resolve(entry.outfile), repo: resolve(entry.repo) });
    this.watches = new DirWatches((dir, name) => this.onEvent(dir, name), deps.log);
  }

  status(): GeminiTailStatus {
    return { outfiles: this.byPath.size, watched_dirs: this.watches.size };
  }

  /** Watches each outfile's directory, then notes where each file's history ends. */
  async start(): Promise<void> {
    const saved = await this.deps.load();
    for (const path of this.byPath.keys()) {
      // Watched before the size is taken: a record written in between raises an event and is read.
      if (!(await this.watches.add(dirname(path)))) {
        this.deps.log.warn({ outfile: path }, 'the directory of a configured Gemini CLI outfile does not exist; it is not tailed');
        continue;
      }
      const size = await sizeOf(path);
      const known = saved[path];
      if (known !== undefined && size !== null && size >= known.offset) {
        this.files.set(path, known);
        if (size > known.offset) this.schedule(path);
      } else {
        this.files.set(path, { offset: size ?? 0, cwd: null, session_id: null });
        if (size !== null && size > 0) this.unaligned.add(path);
        this.markDirty();
      }
    }
    this.deps.log.info({ outfiles: this.byPath.size, watched_dirs: this.watches.size }, 'tailing gemini telemetry outfiles');
    await this.idle();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.rechecks.values()) clearTimeout(timer);
    await this.watches.close();
    await this.idle();
    await this.flush();
  }

  async idle(): Promise<void> {
    for (let seen: Promise<void> | null = null; seen !== this.chain;) {
      seen = this.chain;
      await seen;
    }
  }

  private onEvent(dir: string, name: string | null): void {
    if (this.closed || name === null) return;
    const path = resolve(dir, name);
    if (this.byPath.has(path)) this.schedule(path);
  }

  private schedule(path: string): void {
    if (this.closed || this.pending.has(path)) return;
    this.pending.add(path);
    this.chain = this.chain
      .then(async () => {
        this.pending.delete(path);
        await this.drain(path);
      })
      .catch((error: unknown) => this.deps.log.warn({ err: error, outfile: path }, 'gemini outfile tail failed'));
  }

  private async drain(path: string): Promise<void> {
    const entry = this.byPath.get(path);
    if (entry === undefined) return;
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    try {
      const { size } = await handle.stat();
      let offset = this.files.get(path)?.offset ?? 0;
      // Shorter than our offset: Gemini CLI started the file anew, so all of it is new.
      if (size < offset) {
        offset = 0;
        this.unaligned.delete(path);
      }
      while (offset < size) {
        const length = Math.min(READ_LIMIT, size - offset);
        const buffer = Buffer.alloc(length);
        const { bytesRead } = await handle.read(buffer, 0, length, offset);
        let chunk = buffer.subarray(0, bytesRead);
        if (this.unaligned.has(path)) {
          // History ended mid-record: records start at a line's first column (their insides are indented).
          const start = chunk[0] === 0x7b ? 0 : chunk.indexOf(OPEN_BRACE_AT_LINE_START);
          if (start < 0) break;
          this.unaligned.delete(path);
          offset += start;
          chunk = chunk.subarray(start);
        }
        const end = lastRecordEnd(chunk);
        if (end === 0) {
          if (bytesRead < READ_LIMIT) break;
          // No record ends within a whole read: skip to the next record's start rather than stall.
          const next = chunk.lastIndexOf(OPEN_BRACE_AT_LINE_START);
          this.deps.log.warn({ outfile: path, bytes: next > 0 ? next : bytesRead }, 'skipped a gemini telemetry record longer than the read limit');
          offset += next > 0 ? next + 1 : bytesRead;
          continue;
        }
        await this.feed(entry, chunk.toString('utf8', 0, end));
        offset += end;
        this.files.set(path, { offset, cwd: null, session_id: null });
        this.markDirty();
      }
      // A record caught mid-write: look again shortly, but only while the file still grows.
      const now = (await handle.stat()).size;
      if (now > offset && now !== this.partialAt.get(path)) {
        this.partialAt.set(path, now);
        this.recheck(path);
      } else if (now === offset) {
        this.partialAt.delete(path);
      }
    } finally {
      await handle.close();
    }
  }

  private async feed(entry: GeminiOutfile, text: string): Promise<void> {
    try {
      await this.deps.ingest(text, entry.repo);
    } catch (error) {
      // Refused records are consumed: reading them again would refuse them again.
      if (!isHandoffError(error)) throw error;
      this.deps.log.warn({ outfile: entry.outfile, code: error.code, reason: error.message }, 'gemini telemetry records refused');
    }
  }

  private recheck(path: string): void {
    if (this.rechecks.has(path)) return;
    const timer = setTimeout(() => {
      this.rechecks.delete(path);
      this.schedule(path);
    }, PARTIAL_RECHECK_MS);
    timer.unref();
    this.rechecks.set(path, timer);
  }

  private markDirty(): void {
    if (this.saveTimer !== null || this.closed) return;
    this.saveTimer = setTimeout(() => void this.flush(), SAVE_DELAY_MS);
    this.saveTimer.unref();
  }

  private flush(): Promise<void> {
    if (this.saveTimer !== null) clearTimeout(this.saveTimer);
    this.saveTimer = null;
    const snapshot = Object.fromEntries(this.files);
    this.saving = this.saving.then(() => this.deps.save(snapshot)).catch((error: unknown) => this.deps.log.warn({ err: error }, 'gemini offsets not saved'));
    return this.saving;
  }
}

/** The byte just after the last whole top-level JSON object in `chunk`, or 0 when none ends in it. */
function lastRecordEnd(chunk: Buffer): number {
  const text = chunk.toString('utf8');
  const last = splitJsonObjects(text).values.at(-1);
  return last === undefined ? 0 : Buffer.byteLength(text.slice(0, last.start + last.text.length));
}

async function sizeOf(path: string): Promise<number | null> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}
