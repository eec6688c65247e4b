import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { codexOffsetsStore } from './codex-offsets.js';
import { CodexTail } from './codex-tail.js';
import type { IngestService } from './ingest-service.js';

export interface CodexWatchDeps {
  readonly stateDir: string;
  readonly env: NodeJS.ProcessEnv;
  readonly ingest: IngestService;
  readonly clock: Clock;
  readonly log: Logger;
}

/** Codex's own rule: `$CODEX_HOME`, else `~/.codex`. */
export function codexHome(env: NodeJS.ProcessEnv): string {
  const configured = env['CODEX_HOME'];
  return configured === undefined || configured === '' ? join(homedir(), '.codex') : configured;
}

/** Starts the rollout tail wired to the ingest service; its offsets live in the state dir. */
export async function startCodexWatch(deps: CodexWatchDeps): Promise<CodexTail> {
  const { ingest, clock, log } = deps;
  const store = codexOffsetsStore(deps.stateDir, log);
  const home = codexHome(deps.env);
  const tail = new CodexTail({
    codexHome: home,
    load: store.load,
    save: store.save,
    now: () => new Date(clock.now()),
    log,
    ingest: async (payload, route) => {
      const report = await ingest.ingest({ adapter: 'codex-rollout', payload, repo: route.cwd ?? undefined, executor: route.session_id ?? undefined });
      return { skipped: report.skipped_lines };
    },
  });
  const mode = await tail.start();
  if (mode === 'waiting') log.info({ codexHome: home }, 'no CODEX_HOME directory yet: codex rollouts are tailed once Codex creates it');
  if (mode === 'off') log.info({ codexHome: home }, 'neither CODEX_HOME nor its parent directory exists: codex rollouts are not tailed');
  return tail;
}
