import type { Command } from 'commander';
import { action } from '../context.js';
import { RENDERERS } from '../render/index.js';

interface PauseOptions {
  global?: boolean;
  reason?: string;
}

export function registerPause(program: Command): void {
  program
    .command('pause')
    .description('the kill switch: readings are still recorded, nothing moves until unpause')
    .option('--global', 'pause every workspace (a PAUSE file in the state dir)')
    .option('--reason <text>', 'shown by status')
    .action(
      action(
        (ctx, options: PauseOptions) =>
          ctx.call({
            method: 'POST',
            path: '/v1/pause',
            body: {
              scope: options.global ? 'global' : 'workspace',
              ...(!options.global && { repo: ctx.repo }),
              ...(options.reason && { reason: options.reason }),
            },
          }),
        RENDERERS.pause,
      ),
    );

  program
    .command('unpause')
    .description('lift the kill switch (removes the PAUSE file)')
    .option('--global', 'lift the global pause')
    .action(
      action(
        (ctx, options: PauseOptions) =>
          ctx.call({
            method: 'POST',
            path: '/v1/unpause',
            body: { scope: options.global ? 'global' : 'workspace', ...(!options.global && { repo: ctx.repo }) },
          }),
        RENDERERS.unpause,
      ),
    );
}
