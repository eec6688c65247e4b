import type { HookContext } from './hook-context.js';
import { STDIN_TIMEOUT_MS } from './hook-context.js';
import { askDaemon } from './lean-client.js';
import { readStdin } from './stdin.js';

const DAEMON_DEADLINE_MS = 2000;

/**
 * `handoff hook claude-event`: forwards any Claude Code hook payload (StopFailure, PreCompact…) to the
 * claude-hook adapter. A stop on a rate limit is a provider warning and moves the repository to
 * EVACUATE. Prints nothing: the agent needs no reply, and the daemon keeps the record.
 */
export async function eventHook(ctx: HookContext): Promise<void> {
  const payload = await readStdin(STDIN_TIMEOUT_MS);
  const answer = await askDaemon(ctx.stateDir, { method: 'POST', path: '/v1/ingest/claude-hook', body: { payload } }, DAEMON_DEADLINE_MS);
  if (answer.kind === 'answer' && answer.envelope.error !== undefined) ctx.err(`handoff: ${answer.envelope.error.message}`);
  else if (answer.kind !== 'answer') ctx.err(`handoff: the event was not recorded (${answer.kind === 'down' ? answer.reason : 'daemon not answering'})`);
}
