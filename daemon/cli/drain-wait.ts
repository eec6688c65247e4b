import { failure, runningDrain, success, type Envelope, type StatusView } from '../../protocol/index.js';
import { plainStatus } from '../../protocol/status-words.js';
import type { CommandContext } from './context.js';

/** The daemon answers a status long poll within this; the request may take a little longer. */
const WAIT_MS = 20_000;
const REQUEST_TIMEOUT_MS = WAIT_MS + 10_000;

/**
 * After `handoff now`, `handoff return` or `handoff resume`: follows the drain of the workspace that
 * runs it until the work is recoverable (handoff_ready, 0) or a step is blocked (drain_blocked, 75),
 * reporting each step on stderr.
 */
export async function followDrain(ctx: CommandContext, started: Envelope): Promise<Envelope> {
  if (started.error) return started;
  // The workspace whose machine runs the drain: the cycle's home for a return leg.
  const home = (started.data as { workspace?: string } | null)?.workspace ?? ctx.repo;
  let lastStep = '';
  let seen: number | null = null;
  for (;;) {
    // A long poll: the daemon answers when the workspace changes, not on a timer of ours.
    const poll: Record<string, string> = seen === null ? {} : { after_change: String(seen), wait_ms: String(WAIT_MS) };
    const status = await ctx.call({ method: 'GET', path: '/v1/status', query: { repo: home, ...poll }, timeoutMs: REQUEST_TIMEOUT_MS });
    if (status.error) return status;
    const view = status.data as StatusView & { change: number };
    seen = view.change;
    if (runningDrain(view.state, view.cycle) === null) {
      return view.state === 'HANDOFF_READY' || view.state === 'RETURN_HANDOFF_READY' ? success('handoff_ready', view) : status;
    }
    if (view.blocked !== null) {
      return failure('drain_blocked', view.blocked, 'nothing of yours was changed; fix the cause, then run `handoff resume`', view);
    }
    // One line per step as it starts: which step of how many, and what it does.
    const drain = plainStatus(view, Date.now()).drain;
    const step =
      drain === null
        ? ''
        : drain.waiting
          ? 'waiting for `handoff drained` (or the drain timeout)'
          : `step ${drain.done + 1} of ${drain.total}: ${drain.current?.step ?? 'finishing'}${drain.current ? ` — ${drain.current.words}` : ''}`;
    if (step !== lastStep && step !== '' && !ctx.output.json) ctx.output.err(`… ${step}`);
    lastStep = step;
  }
}
