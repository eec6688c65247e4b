import { lstat, mkdir, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import { transcriptOfSessionEnd } from '../../adapters/telemetry/claude-transcript.js';
import { SPOOL_DIR, SPOOLED_NAME } from '../../protocol/event-spool.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { isErrno } from '../store/errno.js';
import { transcriptStop } from './claude-transcript-tail.js';
import type { IngestService } from './ingest-service.js';

/** A hook payload is a few KiB; the hook reads at most 1 MiB of stdin. */
const SPOOLED_LIMIT = 1 << 20;

export interface EventSpoolDeps {
  readonly stateDir: string;
  readonly ingest: Pick<IngestService, 'ingest'>;
  readonly clock: Clock;
  /** An event older than this is no evidence of now (config pressure.freshness_seconds). */
  readonly maxAgeMs: number;
  readonly log: Logger;
}

/**
 * Reads the hook payloads spooled in the state dir (daemon/cli/hooks/event.ts) at start and as they
 * appear, sends each to the claude-hook adapter and removes it. The daemon is the only reader, so a
 * payload is ingested once whether the hook lived on or was killed right after the rename. One spooled
 * while the daemon was down long ago (a stop on a rate limit hours back) is dropped, never replayed as news.
 */
export async function startEventSpool(deps: EventSpoolDeps): Promise<{ close(): Promise<void> }> {
  const dir = join(deps.stateDir, SPOOL_DIR);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let chain: Promise<void> = Promise.resolve();

  async function take(name: string): Promise<void> {
    const path = join(dir, name);
    try {
      const facts = await lstat(path);
      const age = deps.clock.now() - facts.mtimeMs;
      if (!facts.isFile() || facts.size > SPOOLED_LIMIT || age > deps.maxAgeMs) {
        deps.log.warn({ path, size: facts.size, age_ms: Math.round(age) }, 'a spooled hook payload was dropped: not a file, too big or too old to be news');
      } else {
        const payload = await readFile(path, 'utf8');
        const report = await deps.ingest.ingest({ adapter: 'claude-hook', payload });
        deps.log.info({ path, workspace: report.workspace, warnings: report.warnings.length }, 'a spooled hook payload was ingested');
        await stopInTranscript(payload);
      }
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return;
      // A payload the adapter refuses stays refused: it is logged and removed, not retried forever.
      deps.log.warn({ err: error, path }, 'a spooled hook payload could not be ingested; it is removed');
    }
    await unlink(path).catch((error: unknown) => {
      if (!isErrno(error, 'ENOENT')) deps.log.warn({ err: error, path }, 'a spooled hook payload could not be removed');
    });
  }

  /**
   * Headless Claude Code may kill its StopFailure hook before it starts, but it waits for SessionEnd:
   * the stop is then taken from the transcript that payload names (claude-transcript-tail.ts), once,
   * and only while it is news.
   */
  async function stopInTranscript(payload: string): Promise<void> {
    const named = transcriptOfSessionEnd(payload);
    if (named === null) return;
    try {
      const stop = await transcriptStop(named.path, named.sessionId);
      if ('skipped' in stop) return;
      const age = deps.clock.now() - stop.atMs;
      if (age > deps.maxAgeMs) {
        deps.log.info({ transcript: named.path, age_ms: Math.round(age) }, 'the API error a session ended on is too old to be news');
        return;
      }
      const report = await deps.ingest.ingest({ adapter: 'claude-hook', payload: stop.line });
      deps.log.info({ transcript: named.path, workspace: report.workspace, warnings: report.warnings.length }, 'the API error a session ended on was ingested');
    } catch (error) {
      if (!isErrno(error, 'ENOENT')) deps.log.warn({ err: error, transcript: named.path }, 'the transcript a session ended with could not be read');
    }
  }

  const drain = (): Promise<void> => {
    chain = chain
      .then(async () => {
        for (const name of (await readdir(dir)).filter((entry) => SPOOLED_NAME.test(entry)).sort()) await take(name);
      })
      .catch((error: unknown) => deps.log.warn({ err: error, dir }, 'the spool could not be read'));
    return chain;
  };

  const watcher: FSWatcher = watch(dir, { depth: 0, ignoreInitial: true, ignored: (path) => path !== dir && !SPOOLED_NAME.test(path.slice(dir.length + 1)) });
  watcher.on('add', () => void drain());
  watcher.on('error', (error) => deps.log.warn({ err: error }, 'spool watcher error'));
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  await drain();
  return {
    async close() {
      await watcher.close();
      await chain;
    },
  };
}
