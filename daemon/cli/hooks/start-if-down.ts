import { autoStartOffByEnv, socketAnswers, spawnDaemon, waitForDaemon } from '../auto-start.js';

/** A new session may wait this long for a daemon that was down; the SessionStart hook has no tighter deadline. */
const START_DEADLINE_MS = 10_000;

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
  if (typeof started === 'string') {
    err(`handoff: no daemon answers, and none could be started: ${started}`);
    return;
  }
  const outcome = await waitForDaemon(started, () => socketAnswers(stateDir), START_DEADLINE_MS);
  if (outcome.kind === 'exited') err(`handoff: the daemon started for ${stateDir} exited with ${outcome.code ?? 'a signal'}; see ${started.log}`);
  if (outcome.kind === 'timeout') err(`handoff: the daemon started for ${stateDir} did not answer within ${START_DEADLINE_MS / 1000} s; see ${started.log}`);
}
