/* global process, console */
// Does the record on disk slow the everyday commands down? `handoff status` (and `handoff list` once
// it exists) with a small and a large history, each measured after a daemon restart, so the
// history is replayed from the journal first.
//
// 1,000 CYCLES CANNOT BE PRODUCED YET: a cycle ends only through accept/return/close, which are not
// built. So the history is a journal of readings instead: 1 record, 10,000 records (10,000 real
// credible readings posted over HTTP), and 100,000 records (those 10,000 journal lines repeated ten
// times: same bytes and checksums, written without the daemon, to show the trend quickly).
//
// Usage: node test/bench/store.bench.mjs [--short]   (--short: 1 and 10,000 records only)
import { appendFileSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { api, BENCH_SHORT, createReport, describeMs, git, machine, ms, removeDir, requireBuild, rssKb, runCli, startDaemon, stats, tempBase } from './lib.mjs';

requireBuild();

const CLI_RUNS = 7;
const HTTP_RUNS = 200;
const SIZES = BENCH_SHORT ? [1, 10_000] : [1, 10_000, 100_000];

const report = createReport('store');
console.log(`# store bench · ${machine()}`);
console.log('# 1,000 cycles cannot be produced yet (no accept/return/close): measured with a journal of 1 vs 10,000 (vs 100,000) records instead');

const base = tempBase('store');
const repo = join(base, 'repo');
git(base, ['init', '-q', '-b', 'main', repo]);
const stateDir = join(base, 'state');
const journal = join(stateDir, 'journal.jsonl');
const reading = { repo, source: 'claude-statusline', metric: 'five_hour', used_percent: 42, resets_at: Math.floor(Date.now() / 1000) + 6 * 3600 };

const lines = () => readFileSync(journal, 'utf8').split('\n').filter(Boolean).length;

/** Is `handoff list` built? (commander answers an unknown command with a usage error) */
function listExists() {
  const probe = runCli(stateDir, ['list', '--help']);
  return probe.code === 0 && /list/.test(probe.stdout);
}

async function measure(records) {
  const daemon = await startDaemon(stateDir);
  try {
    const rss = rssKb(daemon.pid);
    const status = [];
    for (let i = 0; i < CLI_RUNS; i += 1) {
      const run = runCli(stateDir, ['status', '--json', '--repo', repo]);
      if (run.code !== 0 || run.envelope?.code !== 'status') throw new Error(`handoff status failed: ${run.stdout}${run.stderr}`);
      status.push(run.ms);
    }
    const http = [];
    for (let i = 0; i < HTTP_RUNS; i += 1) {
      const start = process.hrtime.bigint();
      const answer = await api(daemon, 'GET', `/v1/status?repo=${encodeURIComponent(repo)}`);
      http.push(Number(process.hrtime.bigint() - start) / 1e6);
      if (answer.status !== 200) throw new Error(`GET /v1/status answered ${answer.status}`);
    }
    let list = null;
    if (listExists()) {
      list = [];
      for (let i = 0; i < CLI_RUNS; i += 1) {
        const run = runCli(stateDir, ['list', '--json', '--repo', repo]);
        if (run.code !== 0) throw new Error(`handoff list failed: ${run.stdout}${run.stderr}`);
        list.push(run.ms);
      }
    }
    return { records, startMs: daemon.startMs, rss, status, http, list, bytes: statSync(journal).size };
  } finally {
    await daemon.stop();
  }
}

try {
  // One real record.
  let daemon = await startDaemon(stateDir);
  const first = await api(daemon, 'POST', '/v1/signals', reading);
  if (first.body.code !== 'reading_recorded') throw new Error(`the reading was not recorded: ${JSON.stringify(first.body)}`);
  await daemon.stop();
  if (lines() !== 1) throw new Error(`expected 1 journal record, found ${lines()}`);

  const results = [];
  for (const size of SIZES) {
    if (size === 10_000) {
      daemon = await startDaemon(stateDir);
      const started = Date.now();
      const load = await autocannon({
        url: `http://127.0.0.1:${daemon.port}/v1/signals`,
        method: 'POST',
        headers: { host: `127.0.0.1:${daemon.port}`, 'content-type': 'application/json', authorization: `Bearer ${daemon.token}` },
        body: JSON.stringify(reading),
        connections: 4,
        amount: size - lines(),
      });
      if (load.non2xx > 0 || load.errors > 0) throw new Error(`posting readings failed: ${load.non2xx} non-2xx, ${load.errors} errors`);
      // A reading stamped before another but applied after it is refused as superseded: top up.
      while (lines() < size) await api(daemon, 'POST', '/v1/signals', reading);
      await daemon.stop();
      console.log(`  posted ${load.requests.total} credible readings in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
    if (size === 100_000) {
      // The 10,000 real lines again, nine more times (bytes and checksums as the daemon wrote them).
      const text = readFileSync(journal);
      for (let i = 1; i < 10; i += 1) appendFileSync(journal, text);
      console.log('  journal grown to 100,000 records by repeating the 10,000 real lines (synthetic)');
    }
    if (lines() !== size) throw new Error(`expected ${size} journal records, found ${lines()}`);
    const result = await measure(size);
    results.push(result);
    console.log(
      `  ${size} records (${(result.bytes / 1e6).toFixed(1)} MB): daemon start ${ms(result.startMs)} ms, RSS after start ${(result.rss / 1024).toFixed(0)} MB, handoff status ${describeMs(result.status)}, GET /v1/status ${ms(stats(result.http).median)} ms median`,
    );
  }

  const [one] = results;
  for (const result of results) {
    const ratio = stats(result.status).median / stats(one.status).median;
    const httpRatio = stats(result.http).median / stats(one.http).median;
    report.figure(
      `store ${result.records} journal records (${(result.bytes / 1e6).toFixed(1)} MB${result.records === 100_000 ? ', synthetic' : ''}): handoff status --json ${describeMs(result.status)} · ratio ${ratio.toFixed(2)}× vs 1 record · GET /v1/status ${ms(stats(result.http).median)} ms median (min ${ms(stats(result.http).min)}, max ${ms(stats(result.http).max)}, ${HTTP_RUNS} runs) · ratio ${httpRatio.toFixed(2)}× · daemon start (replay) ${ms(result.startMs)} ms · RSS after start ${(result.rss / 1024).toFixed(0)} MB`,
    );
  }
  if (results[0].list === null) report.figure('store handoff list: not built yet (commander has no `list` command) — not measured');
  else for (const result of results) report.figure(`store ${result.records} journal records: handoff list --json ${describeMs(result.list)} · ratio ${(stats(result.list).median / stats(results[0].list).median).toFixed(2)}×`);
  report.figure('store 1,000 cycles: not measurable yet (cycles cannot reach CLOSED without accept/return/close); journal records used instead');
} finally {
  removeDir(base);
}
report.summary();
