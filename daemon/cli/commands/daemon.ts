import { setTimeout as sleep } from 'node:timers/promises';
import { Option, type Command } from 'commander';
import { failure, fromError, isHandoffError, success, type Envelope } from '../../../protocol/index.js';
import { isProcessAlive, readDaemonInfo } from '../../store/index.js';
import { autoStartRefusal } from '../auto-start-policy.js';
import { action, parseInteger, usage, type CommandContext } from '../context.js';
import { RENDERERS } from '../render/index.js';

const STOP_WAIT_MS = 10_000;

async function run(ctx: CommandContext, port: number): Promise<Envelope> {
  // Loaded only here: the hooks and short commands never pay for fastify, pino and xstate.
  const { runForeground } = await import('../../main.js');
  try {
    await runForeground({ stateDir: ctx.stateDir, port }, (daemon) => {
      const { pid, port: bound, state_dir } = daemon.info;
      // stderr, so that stdout keeps exactly one JSON object (the final Envelope) under --json.
      ctx.output.err(`handoff daemon listening on 127.0.0.1:${bound} (pid ${pid}, state dir ${state_dir})`);
    });
    return success('daemon_stopping', { pid: process.pid });
  } catch (error) {
    if (isHandoffError(error)) return fromError(error);
    throw error;
  }
}

/** `handoff daemon stop`, and `handoff service install` stopping a daemon that runs outside the service. */
export async function stopDaemon(ctx: CommandContext): Promise<Envelope> {
  // Like `systemctl stop`: stopping what does not run is done, not an error.
  const info = await readDaemonInfo(ctx.stateDir);
  if (info === null || !isProcessAlive(info.pid)) return success('daemon_not_running', { pid: null, state_dir: ctx.stateDir });
  const answer = await ctx.call({ method: 'POST', path: '/v1/daemon/stop', autoStart: false });
  const pid = (answer.data as { pid?: number } | null)?.pid;
  if (answer.error || pid === undefined) return answer;
  // Monotonic: a wall-clock step must not stretch or cut the wait (daemon/clock.ts).
  for (const deadline = performance.now() + STOP_WAIT_MS; performance.now() < deadline; await sleep(50)) {
    if (!isProcessAlive(pid)) return answer;
  }
  return {
    ...answer,
    code: 'internal_error',
    error: { message: `daemon pid ${pid} is still running ${STOP_WAIT_MS / 1000} s after stop`, hint: `kill ${pid}` },
  };
}

export function registerDaemon(program: Command): void {
  program
    .command('daemon')
    .description('run the daemon in the foreground (`handoff daemon stop` stops it)')
    .argument('[action]', '`stop` to stop the running daemon')
    .option('--port <n>', 'port on 127.0.0.1; 0 picks a free one (recorded in daemon.json)', (v) => parseInteger('--port', v), 0)
    // Given by auto-start (auto-start.ts): start only if the config's `auto_start` allows it.
    .addOption(new Option('--auto').hideHelp())
    .action(
      action(async (ctx, verb: string | undefined, options: { port: number; auto?: boolean }) => {
        if (verb === 'stop') return stopDaemon(ctx);
        if (verb !== undefined) usage(`unknown daemon action '${verb}'`, 'use `handoff daemon` or `handoff daemon stop`');
        if (options.port > 65535) usage(`--port ${options.port} is out of range`, 'give 0–65535');
        const refusal = options.auto === true ? await autoStartRefusal(ctx.stateDir, process.env) : null;
        if (refusal !== null) return failure('daemon_unreachable', `not started by itself: ${refusal}`, 'start it with `handoff daemon`');
        return run(ctx, options.port);
      }, RENDERERS['daemon stop']),
    );
}
