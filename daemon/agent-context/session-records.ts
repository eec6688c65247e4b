import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SessionRecord } from '../../protocol/index.js';
import type { Logger } from '../logger.js';
import { writeFileAtomic } from '../store/index.js';

export const AGENT_CONTEXT_FILE = 'agent-context.json';
const VERSION = 1;
/** Sessions remembered at once; a machine rarely runs more than a handful of agents. */
export const SESSIONS_KEPT = 256;

type Entry = readonly [root: string, session: string, record: SessionRecord];

function isEntry(value: unknown): value is Entry {
  if (!Array.isArray(value) || value.length !== 3) return false;
  const [root, session, record] = value as unknown[];
  if (typeof root !== 'string' || typeof session !== 'string' || typeof record !== 'object' || record === null) return false;
  const { stage, told, tool_calls: calls, reminded } = record as Record<string, unknown>;
  return typeof stage === 'string' && typeof told === 'boolean' && typeof reminded === 'boolean' && Number.isSafeInteger(calls) && (calls as number) >= 0;
}

const keyOf = (root: string, session: string) => `${root}\u0000${session}`;

/**
 * What each agent session was told in its workspace's current stage: in memory, bounded (the least
 * recently seen session goes first), and in `<state dir>/agent-context.json` so a restarted daemon
 * does not tell a session again. Losing the file costs at most one repeated notice per session, so
 * a damaged one is reported and replaced on the next save rather than stopping the daemon.
 */
export class SessionRecords {
  private readonly records = new Map<string, Entry>();
  private dirty = false;
  private queued: Promise<void> | null = null;
  private last: Promise<void> = Promise.resolve();

  private constructor(
    private readonly path: string,
    private readonly limit: number,
  ) {}

  static async open(stateDir: string, log: Logger, limit = SESSIONS_KEPT): Promise<SessionRecords> {
    const records = new SessionRecords(join(stateDir, AGENT_CONTEXT_FILE), limit);
    let text: string;
    try {
      text = await readFile(records.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return records;
      throw error;
    }
    try {
      const saved = JSON.parse(text) as { version?: unknown; sessions?: unknown };
      if (saved.version !== VERSION || !Array.isArray(saved.sessions)) throw new Error(`not a version ${VERSION} record`);
      for (const entry of saved.sessions) if (isEntry(entry)) records.put(entry);
    } catch (error) {
      log.warn({ path: records.path, err: error }, 'the agent context file is unreadable; sessions may be told their stage once more');
    }
    return records;
  }

  get size(): number {
    return this.records.size;
  }

  get(root: string, session: string): SessionRecord | null {
    return this.records.get(keyOf(root, session))?.[2] ?? null;
  }

  /** Sets (null: forgets) a session's record; it becomes the most recently seen. */
  set(root: string, session: string, record: SessionRecord | null): void {
    const key = keyOf(root, session);
    const had = this.records.delete(key);
    if (record !== null) this.put([root, session, record]);
    if (record !== null || had) this.dirty = true;
  }

  /**
   * Writes the records (temp file, fsync, rename) and resolves once a write that began after this
   * call is done. Calls made while a write is waiting share it; writes never overlap.
   */
  save(): Promise<void> {
    this.queued ??= this.last.then(async () => {
      this.queued = null;
      this.dirty = false;
      const sessions = [...this.records.values()];
      try {
        await writeFileAtomic(this.path, `${JSON.stringify({ version: VERSION, sessions })}\n`, 0o600);
      } catch (error) {
        this.dirty = true;
        throw error;
      }
    });
    const queued = this.queued;
    this.last = queued.catch(() => undefined);
    return queued;
  }

  /** On shutdown: tool call counts are saved only then (or with the next notice). */
  async flush(): Promise<void> {
    if (this.dirty) await this.save();
    await this.last;
  }

  private put(entry: Entry): void {
    this.records.set(keyOf(entry[0], entry[1]), entry);
    for (const oldest of this.records.keys()) {
      if (this.records.size <= this.limit) break;
      this.records.delete(oldest);
    }
  }
}
