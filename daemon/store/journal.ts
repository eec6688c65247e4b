import { constants } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { HandoffError } from '../../protocol/errors.js';
import { fsyncDir } from './atomic-write.js';
import { isErrno } from './errno.js';
import { encodeLine, scanJournal, type TornTail } from './journal-format.js';
import { shellQuote } from '../../protocol/shell-quote.js';

/** The journal's name in the state dir. */
export const JOURNAL_FILE = 'journal.jsonl';
export const DEFAULT_MAX_RECORD_BYTES = 256 * 1024;
const FILE_MODE = 0o600;

export interface JournalOptions {
  /** Called once when recovery cut a torn last line off the file. */
  readonly onTornTail?: (info: TornTail) => void;
  /** Largest accepted JSON text of one record, in bytes. */
  readonly maxRecordBytes?: number;
}

/** Counters that let callers and tests see group commit at work; they do not alter the I/O path. */
export interface JournalStats {
  readonly appends: number;
  readonly writes: number;
  readonly syncs: number;
  readonly compactions: number;
}

export class JournalClosedError extends Error {
  constructor(path: string) {
    super(`journal ${path} is closed; no more appends are accepted`);
    this.name = 'JournalClosedError';
  }
}

/**
 * After a failed write or fsync the file's durable content is unknown (a failed fsync may drop the
 * dirty pages), so the journal refuses further appends instead of building on it; reopening
 * re-reads the file and cuts any torn tail.
 */
export class JournalFailedError extends Error {
  constructor(path: string, cause: unknown) {
    super(`journal ${path} stopped accepting appends after a failed write; reopen it to recover`, { cause });
    this.name = 'JournalFailedError';
  }
}

/** Where a compaction writes the new journal before it takes the journal's name. */
export const compactionPath = (path: string): string => `${path}.compacting`;

interface Pending {
  readonly bytes: Buffer;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** An append-only JSONL file with a checksum per record and group commit. */
export class Journal {
  readonly path: string;
  private handle: FileHandle;
  private readonly maxRecordBytes: number;
  /** Bytes known to be durable; a failed write is cut back to here. */
  private durableSize: number;
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private closing: Promise<void> | null = null;
  private failure: unknown = null;
  private counters = { appends: 0, writes: 0, syncs: 0, compactions: 0 };
  /** A compaction asked for: run by the flush loop once every earlier append is on disk. */
  private compaction: { produce: () => object[]; done: Array<(error: unknown) => void> } | null = null;

  private constructor(path: string, handle: FileHandle, size: number, maxRecordBytes: number) {
    this.path = path;
    this.handle = handle;
    this.durableSize = size;
    this.maxRecordBytes = maxRecordBytes;
  }

  /**
   * Opens (creating, mode 0600) the journal and reads every record. A torn last line is cut away;
   * damage anywhere else throws `corrupt_record` and leaves the file exactly as it was.
   */
  static async open(path: string, options: JournalOptions = {}): Promise<{ journal: Journal; records: unknown[] }> {
    const maxRecordBytes = options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
    // A compaction that crashed before its rename left only this; the journal itself is whole.
    await rm(compactionPath(path), { force: true });
    const handle = await openOrCreate(path);
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) throw new Error(`journal ${path} is not a regular file`);
      const bytes = await handle.readFile();
      const scan = scanJournal(bytes);
      if (scan.kind === 'corrupt') {
        throw new HandoffError(
          'corrupt_record',
          `journal ${path} is corrupt at line ${scan.line} (byte offset ${scan.offset}): ${scan.reason}`,
          `inspect the line with: sed -n '${scan.line}p' ${shellQuote(path)} — nothing was deleted; ` +
            `\`handoff journal repair\` keeps the ${scan.line - 1} verifiable records before it and moves the rest to a file beside the journal`,
          { path, line: scan.line, offset: scan.offset },
        );
      }
      let size = bytes.length;
      if (scan.tornTail !== null) {
        await handle.truncate(scan.tornTail.offset);
        await handle.sync();
        size = scan.tornTail.offset;
        options.onTornTail?.(scan.tornTail);
      }
      return { journal: new Journal(path, handle, size, maxRecordBytes), records: scan.records };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  get stats(): JournalStats {
    return { ...this.counters };
  }

  /** Bytes on disk, every one of them durable. */
  get size(): number {
    return this.durableSize;
  }

  /**
   * Replaces the whole journal with the records `produce` returns, called when no append is queued
   * or in flight (every one accepted so far is durable), so they can describe exactly what it held. The new file is
   * written beside the journal, fsync'd and renamed over it: a crash at any point leaves either the
   * old journal or the new one, each whole. Appends made meanwhile wait and land in the new file.
   */
  compact(produce: () => object[]): Promise<void> {
    if (this.closing !== null) return Promise.reject(new JournalClosedError(this.path));
    if (this.failure !== null) return Promise.reject(new JournalFailedError(this.path, this.failure));
    return new Promise<void>((resolve, reject) => {
      const done = (error: unknown) => (error === null ? resolve() : reject(error));
      if (this.compaction === null) this.compaction = { produce, done: [done] };
      else this.compaction.done.push(done);
      this.flushing ??= this.flushLoop();
    });
  }

  /**
   * Resolves once the record is on disk (written and fsync'd). Appends that arrive while a commit
   * is in flight share the next single write + fsync, in call order.
   */
  async append(record: object): Promise<void> {
    if (this.closing !== null) throw new JournalClosedError(this.path);
    if (this.failure !== null) throw new JournalFailedError(this.path, this.failure);
    const bytes = encodeLine(this.serialize(record));
    this.counters.appends += 1;
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ bytes, resolve, reject });
      this.flushing ??= this.flushLoop();
    });
  }

  /** Waits for every accepted append to settle, then closes the file. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private serialize(record: object): string {
    let json: string | undefined;
    try {
      json = JSON.stringify(record);
    } catch (error) {
      throw new HandoffError(
        'invalid_body',
        `journal record cannot be serialized: ${String(error)}`,
        'journal records must be plain JSON data (no cycles, no BigInt)',
      );
    }
    // A toJSON() returning undefined yields no text at all; an empty line would read back as damage.
    if (typeof json !== 'string') {
      throw new HandoffError('invalid_body', 'journal record serializes to nothing', 'journal plain JSON objects');
    }
    const size = Buffer.byteLength(json, 'utf8');
    if (size > this.maxRecordBytes) {
      throw new HandoffError(
        'invalid_body',
        `journal record is ${size} bytes, over the ${this.maxRecordBytes}-byte limit`,
        'keep records small: store large payloads as files and journal a reference to them',
        { path: this.path, bytes: size, limit: this.maxRecordBytes },
      );
    }
    return json;
  }

  private async flushLoop(): Promise<void> {
    while (this.queue.length > 0 || this.compaction !== null) {
      if (this.queue.length === 0 && this.compaction !== null) {
        const { produce, done } = this.compaction;
        this.compaction = null;
        const error = await this.rewrite(produce).then(
          () => null,
          (failure: unknown) => failure,
        );
        for (const settle of done) settle(error);
        continue;
      }
      const batch = this.queue;
      this.queue = [];
      await this.commit(batch);
    }
    // No await between the empty check and this reset, so no append can slip in unseen.
    this.flushing = null;
  }

  /** Never rejects: every outcome is delivered to the batch's own promises. */
  private async commit(batch: Pending[]): Promise<void> {
    if (this.failure !== null) {
      for (const pending of batch) pending.reject(new JournalFailedError(this.path, this.failure));
      return;
    }
    const bytes = Buffer.concat(batch.map((pending) => pending.bytes));
    try {
      await this.writeAll(bytes);
      this.counters.writes += 1;
      await this.handle.sync();
      this.counters.syncs += 1;
      this.durableSize += bytes.length;
    } catch (error) {
      this.failure = await this.rollback(error);
      for (const pending of batch) pending.reject(error);
      return;
    }
    for (const pending of batch) pending.resolve();
  }

  private async rewrite(produce: () => object[]): Promise<void> {
    if (this.failure !== null) throw new JournalFailedError(this.path, this.failure);
    const bytes = Buffer.concat(produce().map((record) => encodeLine(this.serialize(record))));
    const temp = compactionPath(this.path);
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
    const out = await open(temp, flags, FILE_MODE);
    try {
      let offset = 0;
      while (offset < bytes.length) offset += (await out.write(bytes, offset, bytes.length - offset, null)).bytesWritten;
      await out.sync();
    } catch (error) {
      await out.close();
      await rm(temp, { force: true });
      throw error;
    }
    await out.close();
    await rename(temp, this.path);
    await fsyncDir(dirname(this.path));
    // From here the new file is the journal: appends must go to it, whatever happens next.
    const previous = this.handle;
    try {
      this.handle = await open(this.path, constants.O_RDWR | constants.O_APPEND | constants.O_NOFOLLOW);
    } catch (error) {
      this.failure = error;
      throw error;
    }
    this.durableSize = bytes.length;
    this.counters.compactions += 1;
    await previous.close();
  }

  private async writeAll(bytes: Buffer): Promise<void> {
    let offset = 0;
    while (offset < bytes.length) {
      // O_APPEND places each write at the end; the loop only covers short writes.
      const { bytesWritten } = await this.handle.write(bytes, offset, bytes.length - offset, null);
      offset += bytesWritten;
    }
  }

  /** Cuts a partly written batch so the file ends on a record boundary, as a reopen would. */
  private async rollback(failure: unknown): Promise<unknown> {
    try {
      await this.handle.truncate(this.durableSize);
      await this.handle.sync();
      return failure;
    } catch (rollbackError) {
      return new AggregateError([failure, rollbackError], `journal ${this.path}: write failed and could not be cut back`);
    }
  }

  private async shutdown(): Promise<void> {
    while (this.flushing !== null) await this.flushing;
    await this.handle.close();
  }
}

async function openOrCreate(path: string): Promise<FileHandle> {
  // O_NOFOLLOW: a symlink planted at the journal's name must not redirect our writes elsewhere.
  const base = constants.O_RDWR | constants.O_APPEND | constants.O_NOFOLLOW;
  try {
    const handle = await open(path, base | constants.O_CREAT | constants.O_EXCL, FILE_MODE);
    try {
      await handle.chmod(FILE_MODE);
      await handle.sync();
      await fsyncDir(dirname(path));
    } catch (error) {
      await handle.close();
      throw error;
    }
    return handle;
  } catch (error) {
    if (!isErrno(error, 'EEXIST')) throw error;
    return open(path, base);
  }
}
