import { Option, type Command } from 'commander';
import { CYCLE_ID_EXAMPLE, isCycleId, type Envelope } from '../../../protocol/index.js';
import { action, parseInteger, usage, type CommandContext, type GlobalOptions } from '../context.js';
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

/** A cycle id or its start (at least the 8 digits of its date), checked here, so a typo is answered in words rather than with the API's schema pattern. */
const CYCLE_PREFIX = /^[0-9]{8}(T[0-9]{0,6}(Z(-[a-z2-7]{0,6})?)?)?$/;
function cycleId(value: string): string {
  if (!CYCLE_PREFIX.test(value))
    usage(
      `'${value}' is not a cycle id`,
      `a cycle id looks like ${CYCLE_ID_EXAMPLE} (a unique start of one will do); \`handoff list\` shows the cycles on record`,
    );
  return value;
}

/** A short cycle id is resolved by the daemon, which knows every cycle (as git resolves a short SHA); a full one goes as it is. */
async function fullCycleId(ctx: CommandContext, cycle: string | undefined): Promise<string | Envelope | undefined> {
  if (cycle === undefined || isCycleId(cycle)) return cycle;
  const resolved = await ctx.call({ method: 'GET', path: '/v1/cycles/resolve', query: { prefix: cycle } });
  return resolved.error ? resolved : String((resolved.data as { cycle: string }).cycle);
}

/** Kept for scripts written before the move became the default: a tree is moved whenever nothing can be lost. */
const checkoutOption = () => new Option('--checkout', 'no longer needed: the accept moves a clean tree by itself').hideHelp();

export function registerTakeover(program: Command): void {
  program
    .command('verify')
    .description('run the accept checks (integrity, identity, commit, work tree, instruction files, recency) without taking the lease')
    .argument('[cycle]', 'the cycle id, or a unique start of it', cycleId)
    .option('--latest', 'the one ready cycle of this repository (refuses when several are ready)')
    .option('--from <remote>', 'read the cycle from this git remote (another machine handed off)')
    .option('--return', 'verify the return leg')
    .addOption(checkoutOption())
    .action(
      action(async (ctx, short: string | undefined, options: PickOptions) => {
        const cycle = await fullCycleId(ctx, short);
        if (typeof cycle === 'object') return cycle;
        return ctx.call({ method: 'POST', path: '/v1/verify', body: { repo: ctx.repo, ...pick(cycle, options) }, follow: followed(ctx) });
      }, RENDERERS.verify),
    );

  program
    .command('accept')
    .description('verify this checkout against the manifest, then take the lease (prints the token)')
    .argument('[cycle]', 'the cycle id, or a unique start of it', cycleId)
    .option('--as <executor>', 'your executor id (default: your login and host name, login@host)')
    .option('--latest', 'the one ready cycle of this repository (refuses when several are ready)')
    .option('--from <remote>', 'take the cycle from this git remote: only a clone and the remote are needed')
    .option('--return', 'accept the return leg (the primary takes the work back into its work tree)')
    .addOption(checkoutOption())
    .action(
      action(async (ctx, short: string | undefined, options: PickOptions & { as?: string }) => {
        const cycle = await fullCycleId(ctx, short);
        if (typeof cycle === 'object') return cycle;
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
      action(async (ctx, options: { all?: boolean }) => {
        const all: Record<string, string> = options.all === true ? { all: 'true' } : {};
        const here = await ctx.call({ method: 'GET', path: '/v1/cycles', query: { repo: ctx.repo, ...all } });
        // Outside any repository, like `handoff status`: every workspace the daemon serves. An explicit --repo keeps the error.
        if (here.code !== 'not_a_repository' || program.opts<GlobalOptions>().repo !== undefined) return here;
        return ctx.call({ method: 'GET', path: '/v1/cycles', query: all });
      }, RENDERERS.list),
    );

  program
    .command('show')
    .description('one cycle: every manifest revision with its integrity check (superseded ones say current: false)')
    .argument('<cycle>', 'the cycle id, or a unique start of it', cycleId)
    .action(
      action(async (ctx, short: string) => {
        const cycle = await fullCycleId(ctx, short);
        return typeof cycle === 'object' ? cycle : ctx.call({ method: 'GET', path: '/v1/cycle', query: { cycle: cycle ?? short } });
      }, RENDERERS.show),
    );
}
