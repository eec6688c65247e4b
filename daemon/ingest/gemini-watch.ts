import { dirname, join } from 'node:path';
import type { Config } from '../../schemas/config.schema.js';
import type { Logger } from '../logger.js';
import { GEMINI_OFFSETS_FILE, offsetsStore, QWEN_OFFSETS_FILE } from './codex-offsets.js';
import { GeminiTail } from './gemini-tail.js';
import type { IngestService } from './ingest-service.js';

export interface GeminiWatchDeps {
  readonly stateDir: string;
  /** Qwen Code writes Gemini CLI's outfile under its own event names: the same tail, its own adapter and offsets. */
  readonly agent?: 'gemini' | 'qwen';
  readonly outfiles: Config['gemini']['telemetry_outfiles'];
  readonly ingest: IngestService;
  readonly log: Logger;
}

/**
 * Starts the outfile tail for the outfiles the config names; none configured, none watched. A record
 * names a session, not a directory: each file's records go to its `repo`, by default the repository
 * the outfile lies in (Gemini CLI's documented `.gemini/telemetry.log` of the project).
 */
export async function startGeminiWatch(deps: GeminiWatchDeps): Promise<GeminiTail> {
  const qwen = deps.agent === 'qwen';
  const store = offsetsStore(join(deps.stateDir, qwen ? QWEN_OFFSETS_FILE : GEMINI_OFFSETS_FILE), deps.log);
  const tail = new GeminiTail({
    outfiles: deps.outfiles.map((entry) => ({ outfile: entry.outfile, repo: entry.repo ?? dirname(entry.outfile) })),
    load: store.load,
    save: store.save,
    log: deps.log,
    ingest: async (payload, repo) => {
      await deps.ingest.ingest({ adapter: qwen ? 'qwen-telemetry' : 'gemini-telemetry', payload, repo });
    },
  });
  if (deps.outfiles.length > 0) await tail.start();
  return tail;
}
