import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { success, type Envelope, type IngestReport } from '../../../protocol/index.js';
import { SOURCES } from '../../../schemas/telemetry.schema.js';
import { batchLines, batchRecords, mergeReports, type LineBatches, type MergedReport } from '../ingest-batches.js';
import { action, usage, type CommandContext, type GlobalOptions } from '../context.js';

/** The daemon takes 64 KiB bodies by default; the rest is room for the repo path and the keys. */
const PAYLOAD_BUDGET = 60 * 1024;

async function readPayload(file: string | undefined): Promise<string> {
  if (file !== undefined) return readFile(file, 'utf8');
  if (process.stdin.isTTY) usage('no payload: stdin is a terminal', 'pipe the payload in (`… | handoff ingest ADAPTER`) or pass --file FILE');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const post = (ctx: CommandContext, adapter: string, body: { payload: string; repo?: string; executor?: string }) =>
  ctx.call({ method: 'POST', path: `/v1/ingest/${encodeURIComponent(adapter)}`, body });

/**
 * How a file larger than one body is cut: a Codex rollout in whole lines, Gemini CLI's telemetry
 * outfile (pretty-printed records, 156 KB after one session) in whole records.
 */
const BATCHERS: Readonly<Record<string, (text: string, budget: number) => LineBatches>> = {
  'codex-rollout': batchLines,
  'gemini-telemetry': batchRecords,
  'qwen-telemetry': batchRecords,
  'copilot-events': batchLines,
};

/** Telemetry logs that name no directory: their records belong to the current one unless --repo says otherwise. */
const UNROUTED: ReadonlySet<string> = new Set(['gemini-telemetry', 'qwen-telemetry']);

/**
 * A file larger than one body goes in chunks, in order. The first answer says where the file belongs
 * (a rollout's session_meta opens it), so later chunks carry that repository and session along: they
 * no longer contain the line that names them.
 */
async function ingestChunks(
  ctx: CommandContext,
  adapter: string,
  payload: string,
  repo: string | undefined,
  batch: (text: string, budget: number) => LineBatches,
): Promise<Envelope> {
  const { batches, oversized, firstLines } = batch(payload, PAYLOAD_BUDGET);
  const reports: IngestReport[] = [];
  let route: { repo?: string; executor?: string } = repo === undefined ? {} : { repo };
  for (const batch of batches) {
    const answer = await post(ctx, adapter, { payload: batch, ...route });
    if (answer.error !== undefined) return answer;
    const report = answer.data as IngestReport;
    reports.push(report);
    route = { repo: report.workspace, ...(report.route.session_id === null ? {} : { executor: report.route.session_id }) };
  }
  if (reports.length === 0) return post(ctx, adapter, { payload, ...route });
  return success('ingested', mergeReports(reports, oversized, firstLines));
}

const percent = (value: number | null) => (value === null ? 'unknown' : `${value} %`);

function renderIngest(report: IngestReport | MergedReport): string {
  const lines = [`ingested into ${report.workspace} (state ${report.state}${report.cycle === null ? '' : `, cycle ${report.cycle}`})`];
  for (const r of report.recorded) lines.push(`  recorded      ${r.metric} ${percent(r.used_percent)}`);
  for (const r of report.unchanged) lines.push(`  unchanged     ${r.metric} ${percent(r.used_percent)} (same as the recorded reading)`);
  for (const n of report.not_credible) lines.push(`  not counted   ${n.reading.metric} ${percent(n.reading.used_percent)}: ${n.message}`);
  for (const u of report.unknown) lines.push(`  unknown       ${u.metric}: ${u.reason}`);
  for (const w of report.warnings) lines.push(`  warning       ${w.warning.kind}: ${w.warning.text} (${w.code})`);
  for (const e of report.events) lines.push(`  event         ${e.name}`);
  for (const s of report.skipped_lines) lines.push(`  skipped line  ${s.line}: ${s.reason}`);
  if ('oversized_lines' in report && report.oversized_lines.length > 0) {
    lines.push(`  skipped lines ${report.oversized_lines.join(', ')}: each starts a line or record longer than one request body, left out`);
  }
  return lines.join('\n');
}

export function registerIngest(program: Command): void {
  program
    .command('ingest')
    .description(`feed one raw payload (stdin by default) to an adapter: ${SOURCES.join(', ')}; routed by the payload's cwd unless --repo is given`)
    .argument('<adapter>', 'the adapter that reads the payload')
    .option('--file <path>', 'read the payload from this file instead of stdin')
    .action(
      action(async (ctx, adapter: string, options: { file?: string }) => {
        const payload = await readPayload(options.file);
        // ctx.repo defaults to the current directory; here only an explicit --repo overrides the payload's cwd.
        const repo = program.opts<GlobalOptions>().repo === undefined && !UNROUTED.has(adapter) ? undefined : ctx.repo;
        const batch = Object.hasOwn(BATCHERS, adapter) ? BATCHERS[adapter] : undefined;
        if (batch !== undefined) return ingestChunks(ctx, adapter, payload, repo, batch);
        return post(ctx, adapter, { payload, ...(repo === undefined ? {} : { repo }) });
      }, renderIngest),
    );
}
