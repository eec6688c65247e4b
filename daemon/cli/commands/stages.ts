import type { Command } from 'commander';
import { action } from '../context.js';
import { followDrain } from '../drain-wait.js';
import { RENDERERS } from '../render/index.js';

export function registerStages(program: Command): void {
  program
    .command('prepare')
    .description('enter PREPARE by hand: keep working, refresh the capsule')
    .option('--reason <text>', 'why, for the record')
    .action(
      action((ctx, options: { reason?: string }) => ctx.call({ method: 'POST', path: '/v1/prepare', body: { repo: ctx.repo, ...options } }), RENDERERS.prepare),
    );

  program
    .command('now')
    .description('evacuate now: the agent finishes its atomic step, the daemon checkpoints and offers the lease; waits until ready or blocked')
    .option('--reason <text>', 'why, for the record')
    .option('--no-wait', 'do not wait for the agent to run `handoff drained`')
    .action(
      action(async (ctx, options: { reason?: string; wait: boolean }) => {
        const started = await ctx.call({
          method: 'POST',
          path: '/v1/now',
          body: { repo: ctx.repo, wait: options.wait, ...(options.reason && { reason: options.reason }) },
        });
        return followDrain(ctx, started);
      }, RENDERERS.now),
    );

  program
    .command('drained')
    .description('the source agent finished its in-flight atomic step (ends the drain wait)')
    .action(action((ctx) => ctx.call({ method: 'POST', path: '/v1/drained', body: { repo: ctx.repo } }), RENDERERS.drained));

  program
    .command('cancel')
    .description(
      'end a blocked or unwanted evacuation (back to NORMAL) or return leg (back to TAKEOVER); the cycle is recorded as abandoned, refs already made are kept',
    )
    .option('--reason <text>', 'why, for the record')
    .action(
      action((ctx, options: { reason?: string }) => ctx.call({ method: 'POST', path: '/v1/cancel', body: { repo: ctx.repo, ...options } }), RENDERERS.cancel),
    );

  program
    .command('check')
    .description('exit 0: nothing interrupted; 1: an evacuation needs `handoff resume`; 2: the last cycle completed')
    .action(action((ctx) => ctx.call({ method: 'GET', path: '/v1/check', query: { repo: ctx.repo } }), RENDERERS.check));

  program
    .command('resume')
    .description('run an interrupted or blocked drain again from its first unfinished step; waits until ready or blocked')
    .action(action(async (ctx) => followDrain(ctx, await ctx.call({ method: 'POST', path: '/v1/resume', body: { repo: ctx.repo } })), RENDERERS.resume));
}
