import type { HookContext } from './hook-context.js';
import { sessionStartHook } from './session-start.js';

/**
 * `handoff hook gemini-session-start` (Gemini CLI SessionStart): the pickup of claude-session-start
 * (its payload has the same session_id, cwd and hook_event_name), in Gemini CLI's answer. Plain
 * stdout would reach only the user, as a system message; `hookSpecificOutput.additionalContext`
 * reaches the agent's context. Nothing to say prints nothing.
 */
export async function geminiSessionStartHook(ctx: HookContext): Promise<void> {
  const said: string[] = [];
  await sessionStartHook({ ...ctx, out: (text) => said.push(text) });
  if (said.length === 0) return;
  ctx.out(JSON.stringify({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: said.join('\n') } }));
}
