import type { Command } from 'commander';
import { action } from '../context.js';

export function registerStages(program: Command): void {
  program
    .command('prepare')
    .description('enter PREPARE by hand: keep working, refresh the capsule')
    .option('--reason <text>', 'why, for the record')
    .action(action((ctx, options: { reason?: string }) => ctx.call({ method: 'POST', path: '/v1/prepare', body: { repo: ctx.repo, ...options } })));

  program
    .command('now')
    .description('evacuate now: finish the atomic step, checkpoint, hand off')
    .option('--reason <text>', 'why, for the record')
    .action(action((ctx, options: { reason?: string }) => ctx.call({ method: 'POST', path: '/v1/now', body: { repo: ctx.repo, ...options } })));
}
