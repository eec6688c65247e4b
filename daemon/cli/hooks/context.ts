import { printable, printableJson } from '../../../protocol/printable.js';
import type { HookContext } from './hook-context.js';
import { STDIN_TIMEOUT_MS } from './hook-context.js';
import { askDaemon } from './lean-client.js';
import { readStdin } from './stdin.js';

/**
 * The agent waits on this before every prompt and after every tool call: a live daemon answers in
 * milliseconds (no git, no remote), and past this the turn goes on without a notice.
 */
const DAEMON_DEADLINE_MS = 1000;

/**
 * The events this hook answers, each with the daemon's name for it. Claude Code, Codex and Gemini CLI
 * all read `hookSpecificOutput.additionalContext`; Gemini CLI's BeforeAgent is UserPromptSubmit, its
 * AfterTool is PostToolUse.
 */
const EVENTS: ReadonlyMap<string, string> = new Map([
  ['UserPromptSubmit', 'UserPromptSubmit'],
  ['PostToolUse', 'PostToolUse'],
  ['BeforeAgent', 'UserPromptSubmit'],
  ['AfterTool', 'PostToolUse'],
]);

type Json = Record<string, unknown>;

function parse(text: string): Json | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : null;
  } catch (error) {
    if (error instanceof SyntaxError) return null;
    throw error;
  }
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/**
 * `handoff hook claude-context` (UserPromptSubmit, PostToolUse): asks the daemon what the stage asks
 * of this session and, when there is something to say (once per stage per session, plus one
 * reminder), prints it as the event's additional context. Anything else — another event, no session
 * id, no repository, a daemon that is down, slow or refuses — prints nothing: a notice is a help,
 * never a reason to disturb the agent's turn.
 */
async function stageNotice(ctx: HookContext, answerAs: (event: string, notice: string) => unknown): Promise<void> {
  const payload = parse(await readStdin(STDIN_TIMEOUT_MS));
  const event = text(payload?.['hook_event_name']);
  const session = text(payload?.['session_id']);
  const kind = event === null ? undefined : EVENTS.get(event);
  if (payload === null || event === null || kind === undefined || session === null) return;
  const repo = text(payload['cwd']) ?? process.cwd();
  const answer = await askDaemon(ctx.stateDir, { method: 'POST', path: '/v1/agent-context', body: { repo, session, event: kind } }, DAEMON_DEADLINE_MS);
  if (answer.kind !== 'answer' || answer.envelope.code !== 'agent_context') return;
  const notice = text(answer.envelope.data?.['text']);
  if (notice === null) return;
  ctx.out(printableJson(answerAs(event, printable(notice, { lines: true }))));
}

export const contextHook = (ctx: HookContext): Promise<void> =>
  stageNotice(ctx, (event, notice) => ({ hookSpecificOutput: { hookEventName: event, additionalContext: notice } }));

/** `handoff hook copilot-context`: the same notice where Copilot CLI reads it, `additionalContext` at the top level (it ignores `hookSpecificOutput`). */
export const copilotContextHook = (ctx: HookContext): Promise<void> => stageNotice(ctx, (_event, notice) => ({ additionalContext: notice }));

/** `handoff hook cline-context` (the Cline plugin's beforeRun, sent as UserPromptSubmit): the notice as `appendContext`. */
export const clineContextHook = (ctx: HookContext): Promise<void> => stageNotice(ctx, (_event, notice) => ({ appendContext: notice }));
