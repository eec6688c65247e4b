import { printable } from '../../../protocol/printable.js';
import type { HookContext } from './hook-context.js';
import { STDIN_TIMEOUT_MS } from './hook-context.js';
import { handoffPointer } from './handoff-pointer.js';
import { askDaemon, type DaemonAnswer } from './lean-client.js';
import { readStdin } from './stdin.js';
import { startIfDown } from './start-if-down.js';

const DAEMON_DEADLINE_MS = 2000;

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

function fieldsOf(payload: string): { session: string | null; cwd: string | null } {
  try {
    const value = JSON.parse(payload) as unknown;
    if (typeof value !== 'object' || value === null) return { session: null, cwd: null };
    const { session_id: session, cwd } = value as Record<string, unknown>;
    return { session: text(session), cwd: text(cwd) };
  } catch (error) {
    if (error instanceof SyntaxError) return { session: null, cwd: null };
    throw error;
  }
}

/** The daemon's pickup: the next action, the capsule quality, the lease command, the recovery commands. */
function pickupOf(answer: DaemonAnswer | null): string | null {
  if (answer === null || answer.kind !== 'answer' || answer.envelope.code !== 'agent_context') return null;
  return text(answer.envelope.data?.['text']);
}

/** The short pointer, from the ingest answer alone: used when the daemon could not give the pickup. */
function pointerOf(answer: DaemonAnswer): string | null {
  if (answer.kind !== 'answer' || answer.envelope.error !== undefined || answer.envelope.data === null) return null;
  const { state, workspace, cycle, route } = answer.envelope.data as {
    state?: unknown;
    workspace?: unknown;
    cycle?: unknown;
    route?: { session_id?: unknown };
  };
  if (typeof state !== 'string' || typeof workspace !== 'string' || typeof cycle !== 'string') return null;
  return handoffPointer(state, workspace, cycle, text(route?.session_id));
}

/**
 * `handoff hook claude-session-start` (Claude Code and Codex SessionStart): records the event and,
 * when this repository has a handoff waiting, prints what a receiver needs first — the one next
 * action, the capsule quality, the lease command and the recovery commands; the brief stays in
 * HANDOFF.md. The SessionStart also tells the daemon that this session's context is new (a start,
 * a resume, /clear or a compaction), so the stage's notice is given to it again. A daemon that is down
 * is started first (start-if-down.ts).
 */
export async function sessionStartHook(ctx: HookContext): Promise<void> {
  const payload = await readStdin(STDIN_TIMEOUT_MS);
  const { session, cwd } = fieldsOf(payload);
  await startIfDown(ctx.stateDir, ctx.err);
  const [ingested, context] = await Promise.all([
    askDaemon(ctx.stateDir, { method: 'POST', path: '/v1/ingest/claude-hook', body: { payload } }, DAEMON_DEADLINE_MS),
    session === null
      ? null
      : askDaemon(
          ctx.stateDir,
          { method: 'POST', path: '/v1/agent-context', body: { repo: cwd ?? process.cwd(), session, event: 'SessionStart' } },
          DAEMON_DEADLINE_MS,
        ),
  ]);
  const said = pickupOf(context) ?? pointerOf(ingested);
  // The agent's context and, often, a terminal: nothing in it is a control or bidi character.
  if (said !== null) ctx.out(printable(said, { lines: true }));
}
