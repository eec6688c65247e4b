import type { HookContext } from './hook-context.js';
import { STDIN_TIMEOUT_MS } from './hook-context.js';
import { handoffPointer } from './handoff-pointer.js';
import { askDaemon } from './lean-client.js';
import { readStdin } from './stdin.js';

const DAEMON_DEADLINE_MS = 2000;

/**
 * `handoff hook claude-session-start`: records the SessionStart event and, when this repository has a
 * handoff waiting, prints a pointer to it (Claude Code adds SessionStart output to the context).
 */
export async function sessionStartHook(ctx: HookContext): Promise<void> {
  const payload = await readStdin(STDIN_TIMEOUT_MS);
  const answer = await askDaemon(ctx.stateDir, { method: 'POST', path: '/v1/ingest/claude-hook', body: { payload } }, DAEMON_DEADLINE_MS);
  if (answer.kind !== 'answer' || answer.envelope.error !== undefined || answer.envelope.data === null) return;
  const { state, workspace, cycle, route } = answer.envelope.data as { state?: unknown; workspace?: unknown; cycle?: unknown; route?: { session_id?: unknown } };
  if (typeof state !== 'string' || typeof workspace !== 'string' || typeof cycle !== 'string') return;
  const session = typeof route?.session_id === 'string' ? route.session_id : null;
  const pointer = handoffPointer(state, workspace, cycle, session);
  if (pointer !== null) ctx.out(pointer);
}
