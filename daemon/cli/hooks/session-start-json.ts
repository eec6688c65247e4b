import type { HookContext } from './hook-context.js';
import { sessionStartHook } from './session-start.js';

/**
 * The pickup of claude-session-start (the payload has the same session_id, cwd and hook_event_name)
 * in an agent's JSON answer. Plain stdout would reach only the user, as a system message, in both
 * agents below. Nothing to say prints nothing.
 */
async function pickupAs(ctx: HookContext, answer: (context: string) => unknown): Promise<void> {
  const said: string[] = [];
  await sessionStartHook({ ...ctx, out: (text) => said.push(text) });
  if (said.length === 0) return;
  ctx.out(JSON.stringify(answer(said.join('\n'))));
}

/** `handoff hook gemini-session-start` (Gemini CLI SessionStart): `hookSpecificOutput.additionalContext` reaches the agent's context. */
export const geminiSessionStartHook = (ctx: HookContext): Promise<void> =>
  pickupAs(ctx, (context) => ({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: context } }));

/** `handoff hook copilot-session-start` (Copilot CLI SessionStart): Copilot reads `additionalContext` only at the top level. */
export const copilotSessionStartHook = (ctx: HookContext): Promise<void> => pickupAs(ctx, (context) => ({ additionalContext: context }));

/** `handoff hook cline-session-start` (the Cline plugin's beforeRun): Cline adds `appendContext` to the run as hook context. */
export const clineSessionStartHook = (ctx: HookContext): Promise<void> => pickupAs(ctx, (context) => ({ appendContext: context }));
