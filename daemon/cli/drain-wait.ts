import { failure, success, type Envelope } from '../../protocol/envelope.js';
import { printable } from '../../protocol/printable.js';
import type { StatusView } from '../../protocol/status-view.js';
import { runningDrain } from '../../protocol/running-drain.js';
import type { StepProgress } from '../../schemas/index.js';
import type { CommandContext } from './context.js';
import { liveLine, newLines, nothingSaid } from './render/drain-progress.js';

/** The daemon went away under a drain: the drain is journaled step by step, so resuming is the way on, not just restarting. */
const DAEMON_GONE_HINT =
  'the drain stopped with the daemon; nothing of yours was changed: `handoff resume` runs it on from its first unfinished step (a daemon started with `handoff daemon` resumes it by itself)';

/** The daemon answers a status long poll within this; the request may take a little longer. */
const WAIT_MS = 20_000;
/** While a step runs the count and the elapsed time move without a change of state: look again each second. */
const LIVE_WAIT_MS = 1_000;
/** In a pipe or a log a running step is said again at most this often; a terminal rewrites one line in place. */
const PIPE_EVERY_MS = 5_000;

type Followed = StatusView & { change: number; step_progress?: StepProgress | null };

/**
 * After `handoff now`, `handoff return` or `handoff resume`: follows the drain of the workspace that
 * runs it until the work is recoverable (handoff_ready, 0) or a step is blocked (drain_blocked, 75),
 * saying on stderr each step as it finishes (skipped ones named) and, on a step longer than a
 * second, how far it got and for how long.
 */
export async function followDrain(ctx: CommandContext, started: Envelope, stderr: NodeJS.WriteStream = process.stderr): Promise<Envelope> {
  if (started.error) return started;
  // The workspace whose machine runs the drain: the cycle's home for a return leg.
  const home = (started.data as { workspace?: string } | null)?.workspace ?? ctx.repo;
  const said = nothingSaid();
  const tty = stderr.isTTY === true;
  let live: string | null = null;
  let liveSaidAt = 0;
  let liveStartedAt = 0;
  let seen: number | null = null;
  // Permanent lines first wipe the live one off a terminal; it is drawn again after them.
  const say = (lines: readonly string[], end = false) => {
    if (ctx.output.json || (lines.length === 0 && !end)) return;
    if (tty && live !== null) stderr.write('\r\u001b[K');
    live = null;
    // Paths, branch names and reasons come from the repository and the daemon: escaped before a terminal sees them.
    for (const line of lines) ctx.output.err(printable(line));
  };
  for (;;) {
    // A long poll: the daemon answers when the workspace changes; each second while a step runs.
    const waitMs = live === null ? WAIT_MS : LIVE_WAIT_MS;
    const poll: Record<string, string> = seen === null ? {} : { after_change: String(seen), wait_ms: String(waitMs) };
    const status = await ctx.call({ method: 'GET', path: '/v1/status', query: { repo: home, ...poll }, timeoutMs: waitMs + 10_000 });
    if (status.error) return status.code === 'daemon_unreachable' ? { ...status, error: { message: status.error.message, hint: DAEMON_GONE_HINT } } : status;
    const view = status.data as Followed;
    seen = view.change;
    say(newLines(view, said));
    if (runningDrain(view.state, view.cycle) === null || view.blocked !== null) say([], true);
    if (runningDrain(view.state, view.cycle) === null) {
      return view.state === 'HANDOFF_READY' || view.state === 'RETURN_HANDOFF_READY' ? success('handoff_ready', view) : status;
    }
    if (view.blocked !== null) {
      return failure('drain_blocked', view.blocked, 'nothing of yours was changed; fix the cause, then run `handoff resume`', view);
    }
    // The wall clock words the line a person reads; its pacing is a duration, on the monotonic clock.
    const line = liveLine(view, view.step_progress ?? null, Date.now());
    const now = performance.now();
    if (line === null || ctx.output.json) {
      live = null;
    } else if (tty) {
      // One terminal row, or the carriage return would rewrite only its last part.
      const columns = stderr.columns > 10 ? stderr.columns : 80;
      const shown = printable(line);
      stderr.write(`\r\u001b[K${shown.length < columns ? shown : `${shown.slice(0, columns - 2)}…`}`);
      live = line;
    } else {
      // Said once a step has run a second, then every few seconds: a log gets the count, not a flood.
      if (live === null) liveStartedAt = now;
      if (now - liveStartedAt >= 1_000 && now - liveSaidAt >= PIPE_EVERY_MS) {
        ctx.output.err(printable(line));
        liveSaidAt = now;
      }
      live = line;
    }
  }
}
