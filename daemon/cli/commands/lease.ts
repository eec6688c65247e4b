import type { Command } from 'commander';
import { action, parseInteger } from '../context.js';
import { RENDERERS } from '../render/index.js';

const token = (value: string) => parseInteger('--token', value);

export function registerLease(program: Command): void {
  const lease = program.command('lease').description('the execution lease: only its holder may act on the repository');

  lease
    .command('show', { isDefault: true })
    .description('who holds the lease, its token, the last recorded break')
    .action(action((ctx) => ctx.call({ method: 'GET', path: '/v1/lease', query: { repo: ctx.repo } }), RENDERERS['lease show']));

  lease
    .command('acquire')
    .description('take the free lease; prints the token every later call must carry')
    .requiredOption('--as <executor>', 'your executor id')
    .action(
      action(
        (ctx, options: { as: string }) => ctx.call({ method: 'POST', path: '/v1/lease/acquire', body: { repo: ctx.repo, as: options.as } }),
        RENDERERS['lease acquire'],
      ),
    );

  lease
    .command('renew')
    .description('confirm you still hold the lease')
    .requiredOption('--token <n>', 'your lease token', token)
    .action(
      action(
        (ctx, options: { token: number }) => ctx.call({ method: 'POST', path: '/v1/lease/renew', body: { repo: ctx.repo, token: options.token } }),
        RENDERERS['lease renew'],
      ),
    );

  lease
    .command('release')
    .description('give the lease up')
    .requiredOption('--token <n>', 'your lease token', token)
    .action(
      action(
        (ctx, options: { token: number }) => ctx.call({ method: 'POST', path: '/v1/lease/release', body: { repo: ctx.repo, token: options.token } }),
        RENDERERS['lease release'],
      ),
    );

  lease
    .command('break')
    .description('operator override: free the lease from its holder; recorded with the reason')
    .requiredOption('--reason <text>', 'why; kept in the journal and shown by status')
    .action(
      action(
        (ctx, options: { reason: string }) => ctx.call({ method: 'POST', path: '/v1/lease/break', body: { repo: ctx.repo, reason: options.reason } }),
        RENDERERS['lease break'],
      ),
    );
}
