import type { StatusLineHook } from '../../../adapters/agents/hook-commands.js';
import type { HookContext } from './hook-context.js';
import { STDIN_TIMEOUT_MS } from './hook-context.js';
import { askDaemon } from './lean-client.js';
import { readStdin } from './stdin.js';
import { joinStatus, statusText } from './status-text.js';

/** Connect and answer: Claude Code debounces status updates to ~300 ms, a status line must not lag. */
const DAEMON_DEADLINE_MS = 450;
/** The user's own command is theirs to make slow, within reason. */
const CHAIN_DEADLINE_MS = 2000;

/** Loaded only when a command is chained: child_process is a cost the plain status line skips. */
async function chained(command: string, payload: string): Promise<string | null> {
  const { runChained } = await import('./chain.js');
  return runChained(command, payload, CHAIN_DEADLINE_MS);
}

/**
 * A status line hook: forward the payload to the adapter of the same name, print one line, whatever
 * happens. A daemon that is down is started in the background (start-if-down.ts), never waited for.
 */
const statusLineHook =
  (source: StatusLineHook) =>
  async (ctx: HookContext): Promise<void> => {
    const payload = await readStdin(STDIN_TIMEOUT_MS);
    const [answer, theirs] = await Promise.all([
      askDaemon(ctx.stateDir, { method: 'POST', path: `/v1/ingest/${source}`, body: { payload } }, DAEMON_DEADLINE_MS),
      ctx.chain === null ? null : chained(ctx.chain, payload),
    ]);
    ctx.out(joinStatus(theirs, statusText(answer)));
    // After the line is out: loaded only when the daemon is down, so the usual refresh pays nothing for it.
    if (answer.kind === 'down') (await import('./start-if-down.js')).kickOffDaemon(ctx.stateDir, ctx.err);
  };

/** `handoff hook claude-statusline` (Claude Code's statusLine.command). */
export const statuslineHook = statusLineHook('claude-statusline');
/** `handoff hook copilot-statusline` (Copilot CLI's statusLine.command, its interactive UI only). */
export const copilotStatuslineHook = statusLineHook('copilot-statusline');
/** `handoff hook qwen-statusline` (Qwen Code's ui.statusLine command, its interactive UI only). */
export const qwenStatuslineHook = statusLineHook('qwen-statusline');
