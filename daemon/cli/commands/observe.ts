import type { Command } from 'commander';
import type { StatusView } from '../../../protocol/index.js';
import { METRICS, SOURCES, WARNING_KINDS } from '../../../schemas/telemetry.schema.js';
import { action, oneOf, parseEpochSeconds, parsePercent, usage, type GlobalOptions } from '../context.js';
import { colorWanted, renderStatus } from '../output.js';
import { renderOverview } from '../render/overview.js';
import { RENDERERS } from '../render/index.js';

interface SignalOptions {
  source?: string;
  metric?: string;
  usedPercent?: string;
  resetsAt?: number;
  warning?: string;
  kind?: string;
  executor?: string;
}

export function registerObserve(program: Command): void {
  program
    .command('status')
    .description('state, each reading with its source and age, the lease, the cycle, pause and blocked reason')
    .action(
      action(
        async (ctx) => {
          const status = await ctx.call({ method: 'GET', path: '/v1/status', query: { repo: ctx.repo } });
          // Outside any repository a person still gets an answer: the workspaces the daemon serves.
          // `--json` and an explicit --repo keep the error, which says exactly what was wrong.
          if (status.code !== 'not_a_repository' || ctx.output.json || program.opts<GlobalOptions>().repo !== undefined) return status;
          const overview = await ctx.call({ method: 'GET', path: '/v1/workspaces' });
          return overview.error ? status : overview;
        },
        (data: never, code, view) =>
          code === 'workspaces' ? renderOverview(data, code, view) : renderStatus(data as StatusView, { color: colorWanted(), ...view }),
      ),
    );

  program
    .command('signal')
    .description('report one reading (--metric, --used-percent) or a provider near-limit warning (--warning)')
    .option('--source <adapter>', 'the adapter the number was read from, e.g. claude-statusline')
    .option('--metric <metric>', 'context, five_hour, seven_day, weekly, monthly, requests, tokens or spend')
    // Parsed in the action: commander turns a parser's null into ''.
    .option('--used-percent <percent>', 'percent used as the agent shows it (0–100), or `unknown`')
    .option('--resets-at <epoch>', 'when the window resets, Unix epoch seconds', parseEpochSeconds)
    .option('--executor <id>', 'the agent session that reported it')
    .option('--warning <text>', 'a provider near-limit warning instead of a reading')
    .option('--kind <kind>', 'warning kind: rate_limit, spend_cap, insufficient_quota, overloaded, other')
    .action(
      action((ctx, options: SignalOptions) => {
        if (options.source === undefined) usage('--source is required', 'name the adapter, e.g. --source claude-statusline');
        const source = oneOf('--source', options.source, SOURCES);
        if (options.warning !== undefined) {
          if (options.metric !== undefined || options.usedPercent !== undefined)
            usage('--warning does not take --metric or --used-percent', 'send the reading and the warning separately');
          return ctx.call({
            method: 'POST',
            path: '/v1/warnings',
            body: {
              repo: ctx.repo,
              source,
              text: options.warning,
              ...(options.kind && { kind: oneOf('--kind', options.kind, WARNING_KINDS) }),
              ...(options.executor && { executor: options.executor }),
            },
          });
        }
        if (options.metric === undefined || options.usedPercent === undefined)
          usage('a reading needs --metric and --used-percent', 'e.g. --metric five_hour --used-percent 82 (or `unknown`)');
        return ctx.call({
          method: 'POST',
          path: '/v1/signals',
          body: {
            repo: ctx.repo,
            source,
            metric: oneOf('--metric', options.metric, METRICS),
            used_percent: parsePercent(options.usedPercent),
            ...(options.resetsAt !== undefined && { resets_at: options.resetsAt }),
            ...(options.executor && { executor: options.executor }),
          },
        });
      }, RENDERERS.signal),
    );
}
