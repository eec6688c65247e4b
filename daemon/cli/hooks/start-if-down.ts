import { statSync } from 'node:fs';
import { join } from 'node:path';
import { AUTOSTART_LOG, autoStartOffByEnv, socketAnswers, spawnDaemon, waitForDaemon } from '../auto-start.js';

/** A new session may wait this long for a daemon that was down; the SessionStart hook has no tighter deadline. */
const START_DEADLINE_MS = 10_000;
/** The status line refreshes every few hundred ms: a daemon that will not start is tried again at most this often. */
const KICK_INTERVAL_MS = 30_000;

/**
 * The SessionStart hook's first step: when nothing answers on the state dir's socket (after a reboot,
 * or in a fresh clone's sandbox), start the daemon and wait for it, so the session starts protected.
 * The started daemon applies `auto_start` from the config itself (`--auto`); HANDOFF_NO_AUTO_START
 * skips even the attempt. Never throws: the hook goes on and says "daemon down" as before.
 */
export async function startIfDown(stateDir: string, err: (text: string) => void): Promise<void> {
  if (autoStartOffByEnv(process.env) || (await socketAnswers(stateDir))) return;
  let started: ReturnType<typeof spawnDaemon>;
  try {
    started = spawnDaemon(stateDir);
  } catch (error) {
    err(`handoff: no daemon answers, and none could be started: ${(error as Error).message}`);
    return;
  }
  if ('refused' in started) {
    err(`handoff: no daemon answers, and none could be started: ${started.refused}`);
    return;
  }
  const outcome = await waitForDaemon(started, () => socketAnswers(stateDir), START_DEADLINE_MS);
  if (outcome.kind === 'exited') err(`handoff: the daemon started for ${stateDir} exited with ${outcome.code ?? 'a signal'}; see ${started.log}`);
  if (outcome.kind === 'timeout') err(`handoff: the daemon started for ${stateDir} did not answer within ${START_DEADLINE_MS / 1000} s; see ${started.log}`);
}

/**
 * The status line's share: it says "daemon down" at once and starts one in the background, never
 * waiting for it; the next refresh finds it. At most one attempt per KICK_INTERVAL_MS (the last one's
 * time is autostart.log's), so a daemon that cannot start is not spawned on every refresh.
 */
export function kickOffDaemon(stateDir: string, err: (text: string) => void): void {
  if (autoStartOffByEnv(process.env)) return;
  try {
    const last = statSync(join(stateDir, AUTOSTART_LOG), { throwIfNoEntry: false });
    if (last !== undefined && Math.abs(Date.now() - last.mtimeMs) < KICK_INTERVAL_MS) return;
    const started = spawnDaemon(stateDir);
    if ('refused' in started) err(`handoff: no daemon answers, and none could be started: ${started.refused}`);
  } catch (error) {
    err(`handoff: no daemon answers, and none could be started: ${(error as Error).message}`);
  }
}
