import { open } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { HookContext } from './hook-context.js';
import { STDIN_TIMEOUT_MS } from './hook-context.js';
import { askDaemon } from './lean-client.js';
import { readStdin } from './stdin.js';

/** The session is over and nobody waits on this hook: a busy daemon gets longer than the edit guard's 2 s before the 429 is lost. */
const DAEMON_DEADLINE_MS = 5000;
/** Copilot may still be writing the turn's error to its log when SessionEnd starts (seen on a loaded machine): looked for again this long. */
const ERROR_FLUSH_MS = 1500;
const ERROR_POLL_MS = 100;
/** Copilot's session ids are UUIDs; anything else never becomes part of a path. */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The start of the log (session.start) and its end (the turn's error) are what the adapter reads. */
const HEAD_BYTES = 64 * 1024;
const TAIL_BYTES = 1024 * 1024;
const WANTED = /^\{"type":"session\.(?:start|error)"/;

/** The lines of Copilot's session log that say where the session runs and how its turns failed. */
async function sessionLines(path: string): Promise<string> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const read = async (at: number, length: number) => {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await file.read(buffer, 0, length, at);
      return buffer.subarray(0, bytesRead).toString('utf8');
    };
    const text = size <= HEAD_BYTES + TAIL_BYTES ? await read(0, size) : `${await read(0, HEAD_BYTES)}\n${await read(size - TAIL_BYTES, TAIL_BYTES)}`;
    return text
      .split('\n')
      .filter((line) => WANTED.test(line))
      .join('\n');
  } finally {
    await file.close();
  }
}

/**
 * `handoff hook copilot-event` (Copilot CLI SessionEnd; `reason: "error"` after a turn that failed):
 * Copilot keeps a provider's 429 only in its session log (`session.error` with `statusCode`), so
 * this hook hands the log's session.start and session.error lines to the daemon's copilot-events
 * adapter, which turns a recent 429 into a provider warning. Prints nothing: Copilot needs no reply.
 */
export async function copilotEventHook(ctx: HookContext): Promise<void> {
  let payload: unknown;
  try {
    payload = JSON.parse(await readStdin(STDIN_TIMEOUT_MS));
  } catch (error) {
    if (error instanceof SyntaxError) return;
    throw error;
  }
  const session = typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>)['session_id'] : undefined;
  if (typeof session !== 'string' || !SESSION_ID.test(session)) return;
  const home = process.env['COPILOT_HOME'] || join(homedir(), '.copilot');
  const log = join(home, 'session-state', session, 'events.jsonl');
  const endedInError = (payload as Record<string, unknown>)['reason'] === 'error';
  let lines: string;
  try {
    lines = await sessionLines(log);
    for (const until = performance.now() + ERROR_FLUSH_MS; endedInError && !lines.includes('"session.error"') && performance.now() < until;) {
      await sleep(ERROR_POLL_MS);
      lines = await sessionLines(log);
    }
  } catch (error) {
    ctx.err(`handoff: Copilot's session log was not read (${(error as Error).message})`);
    return;
  }
  if (!lines.includes('"session.error"')) return;
  const answer = await askDaemon(ctx.stateDir, { method: 'POST', path: '/v1/ingest/copilot-events', body: { payload: lines } }, DAEMON_DEADLINE_MS);
  if (answer.kind !== 'answer')
    ctx.err(`handoff: the daemon did not take Copilot's session error (${answer.kind === 'down' ? answer.reason : 'no answer in time'})`);
  else if (answer.envelope.error !== undefined) ctx.err(`handoff: ${answer.envelope.error.message}`);
}
