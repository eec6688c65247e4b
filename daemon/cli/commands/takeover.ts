import { Option, type Command } from 'commander';
import { CYCLE_ID_EXAMPLE, isCycleId } from '../../../protocol/index.js';
import { action, parseInteger, usage, type CommandContext } from '../context.js';
import { followDrain } from '../drain-wait.js';
import { DEFAULT_EXECUTOR_WORDS, defaultExecutor } from '../executor-default.js';
import { RENDERERS } from '../render/index.js';

interface PickOptions {
  from?: string;
  latest?: boolean;
  return?: boolean;
  checkout?: boolean;
}

function pick(cycle: string | undefined, options: PickOptions) {
  if (cycle === undefined && options.latest !== true) usage('name the cycle, or pass --latest', '`handoff list` shows the cycles on record');
  if (cycle !== undefined && options.latest === true) usage('give either a cycle or --latest, not both', 'drop one of them');
  return {
    ...(cycle !== undefined && { cycle }),
    ...(options.from !== undefined && { from: options.from }),
    ...(options.latest && { latest: true }),
    ...(options.return && { return: true }),
    ...(options.checkout && { checkout: true }),
  };
}

const token = (value: string) => parseInteger('--token', value);

/** Accept and verify may fetch from a remote for long: followed, with what the daemon does now on stderr. */
const followed = (ctx: CommandContext) => ({ progress: (line: string) => (ctx.output.json ? undefined : ctx.output.err(line)) });

/** A cycle id is checked here, so a typo is answered in words rather than with the API's schema pattern. */
function cycleId(value: string): string {
  if (!isCycleId(value)) usage(`'${value}' is not a cycle id`, `a cycle id looks like ${CYCLE_ID_EXAMPLE}; \`handoff list\` shows the cycles on record`);
  return value;
}

/** Kept for scripts written before the move became the default: a tree is moved whenever nothing can be lost. */
const checkoutOption = () => new Option('--checkout', 'no longer needed: the accept moves a clean tree by itself').hideHelp();

export function registerTakeover(program: Command): void {
  program
    .command('verify')
    .description('run the accept checks (integrity, identity, commit, work tree, instruction files, recency) without taking the lease')
    .argument('[cycle]', 'the cycle id', cycleId)
    .option('--latest', 'the one ready cycle of this repository (refuses when several are ready)')
    .option('--from <remote>', 'read the cycle from this git remote (another machine handed off)')
    .option('--return', 'verify the return leg')
    .addOption(checkoutOption())
    .action(
      action(
        (ctx, cycle: string | undefined, options: PickOptions) =>
          ctx.call({ method: 'POST', path: '/v1/verify', body: { repo: ctx.repo, ...pick(cycle, options) }, follow: followed(ctx) }),
        RENDERERS.verify,
      ),
    );

  program
    .command('accept')
    .description('verify this checkout against the manifest, then take the lease (prints the token)')
    .argument('[cycle]', 'the cycle id', cycleId)
    .option('--as <executor>', 'your executor id (default: your login and host name, login@host)')
    .option('--latest', 'the one ready cycle of this repository (refuses when several are ready)')
    .option('--from <remote>', 'take the cycle from this git remote: only a clone and the remote are needed')
    .option('--return', 'accept the return leg (the primary takes the work back into its work tree)')
    .addOption(checkoutOption())
    .action(
      action(async (ctx, cycle: string | undefined, options: PickOptions & { as?: string }) => {
        const body = { repo: ctx.repo, as: options.as ?? defaultExecutor(), ...pick(cycle, options) };
        const answer = await ctx.call({ method: 'POST', path: '/v1/accept', body, follow: followed(ctx) });
        // Said beside the id: a default nobody typed is named with where it came from.
        return options.as !== undefined || answer.error !== undefined || answer.data === null
          ? answer
          : { ...answer, data: { ...answer.data, executor_from: DEFAULT_EXECUTOR_WORDS } };
      }, RENDERERS.accept),
    );

  program
    .command('return')
    .description('the lease holder hands the work back: the same drain on this side, then the primary accepts')
    .option('--no-wait', 'do not wait for `handoff drained`')
    .option('--token <n>', 'the lease token from `handoff accept` (default: the one recorded at accept)', token)
    .action(
      action(
        async (ctx, options: { wait: boolean; token?: number }) =>
          followDrain(
            ctx,
            await ctx.call({
              method: 'POST',
              path: '/v1/return',
              body: { repo: ctx.repo, wait: options.wait, ...(options.token !== undefined && { token: options.token }) },
            }),
          ),
        RENDERERS.return,
      ),
    );

  program
    .command('close')
    .description('end a one-way cycle from TAKEOVER (recorded)')
    .option('--one-way', 'the cycle does not come back to the primary')
    .option('--token <n>', 'the lease token (default: the one recorded at accept)', token)
    .action(
      action(
        (ctx, options: { oneWay?: boolean; token?: number }) =>
          ctx.call({
            method: 'POST',
            path: '/v1/close',
            body: { repo: ctx.repo, one_way: options.oneWay === true, ...(options.token !== undefined && { token: options.token }) },
          }),
        RENDERERS.close,
      ),
    );

  program
    .command('list')
    .description('the latest cycles on record (20 per workspace), with the integrity of their manifests')
    .option('--all', 'every cycle on record')
    .action(
      action(
        (ctx, options: { all?: boolean }) =>
          ctx.call({ method: 'GET', path: '/v1/cycles', query: { repo: ctx.repo, ...(options.all === true ? { all: 'true' } : {}) } }),
        RENDERERS.list,
      ),
    );

  program
    .command('show')
    .description('one cycle: every manifest revision with its integrity check (superseded ones say current: false)')
    .argument('<cycle>', 'the cycle id', cycleId)
    .action(action((ctx, cycle: string) => ctx.call({ method: 'GET', path: '/v1/cycle', query: { cycle } }), RENDERERS.show));
}
