// Does the record on disk slow the everyday commands down? `handoff status` and `handoff list` with
// 1 cycle on record vs 1,000, each measured after a daemon restart (so the journal is replayed first):
// the CLI as a user runs it, and the HTTP call alone (without the CLI's start-up).
//
// How the 1,000 cycles are made: R real cycles go the whole way over the API (now → HANDOFF_READY →
// accept → return → accept --return → CLOSED) on a small repository with a bare remote. Making
// 1,000 that way would take minutes, so the record is then grown to 1,000 cycles by copying the real
// cycles' package directories under new cycle ids and repeating the real cycles' journal lines (same
// bytes and checksums) — SYNTHETIC, and said so in every figure line.
//
// If the cycle path does not work (not built, or failing), it falls back to a journal of readings:
// 1 record vs 10,000 real credible readings, and says so.
//
// Usage: node test/bench/store.bench.mjs [--short]   (HANDOFF_BENCH_REAL_CYCLES, default 5; --short 3)
import { appendFileSync, cpSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import {
  api,
  BENCH_SHORT,
  createReport,
  describeMs,
  fullCycle,
  git,
  machine,
  ms,
  removeDir,
  requireBuild,
  rssKb,
  runCli,
  startDaemon,
  stats,
  tempBase,
} from './lib.mjs';

requireBuild();

const CLI_RUNS = 7;
const HTTP_RUNS = 100;
const TARGET_CYCLES = 1000;
const REAL_CYCLES = Number(process.env.HANDOFF_BENCH_REAL_CYCLES ?? (BENCH_SHORT ? 3 : 5));
const IDENTITY = { GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@localhost', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@localhost' };
const CYCLE_ID = /^[0-9]{8}T[0-9]{6}Z-[a-z2-7]{6}$/;

const report = createReport('store');
console.log(`# store bench · ${machine()}`);

const base = tempBase('store');
const repo = join(base, 'repo');
const stateDir = join(base, 'state');
const journal = join(stateDir, 'journal.jsonl');
const lines = () => readFileSync(journal, 'utf8').split('\n').filter(Boolean).length;
const cycleDirs = () => readdirSync(join(repo, '.session-handoff')).filter((name) => CYCLE_ID.test(name));

function makeRepo() {
  git(base, ['init', '-q', '-b', 'main', repo]);
  for (let i = 0; i < 50; i += 1) appendFileSync(join(repo, `file-${i}.txt`), `line ${i}\n`);
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'init'], { env: { ...process.env, ...IDENTITY } });
  git(base, ['init', '-q', '--bare', join(base, 'remote.git')]);
  git(repo, ['remote', 'add', 'origin', join(base, 'remote.git')]);
  git(repo, ['push', '-q', '-u', 'origin', 'main']);
}

/** Restart, then time the commands: the CLI (as a user runs it) and the HTTP call alone. */
async function measure(label, withList) {
  const daemon = await startDaemon(stateDir);
  try {
    const rss = rssKb(daemon.pid);
    const cli = async (args, code) => {
      const times = [];
      for (let i = 0; i < CLI_RUNS; i += 1) {
        const run = runCli(stateDir, [...args, '--json', '--repo', repo]);
        if (run.code !== 0 || run.envelope?.code !== code)
          throw new Error(`handoff ${args.join(' ')} failed (${run.code}): ${run.stdout.slice(0, 500)}${run.stderr}`);
        times.push(run.ms);
      }
      return times;
    };
    const http = async (path, runs) => {
      const times = [];
      for (let i = 0; i < runs; i += 1) {
        const start = process.hrtime.bigint();
        const answer = await api(daemon, 'GET', `${path}?repo=${encodeURIComponent(repo)}`);
        times.push(Number(process.hrtime.bigint() - start) / 1e6);
        if (answer.status !== 200) throw new Error(`GET ${path} answered ${answer.status}`);
      }
      return times;
    };
    const result = { label, startMs: daemon.startMs, rss, bytes: statSync(journal).size, records: lines() };
    result.status = await cli(['status'], 'status');
    result.statusHttp = await http('/v1/status', HTTP_RUNS);
    if (withList) {
      result.list = await cli(['list'], 'cycles');
      result.listHttp = await http('/v1/cycles', 20);
      const listed = await api(daemon, 'GET', `/v1/cycles?repo=${encodeURIComponent(repo)}`);
      result.listed = listed.body.data.cycles.length;
    }
    console.log(
      `  ${label}: journal ${result.records} records (${(result.bytes / 1e6).toFixed(1)} MB) · daemon start (replay) ${ms(result.startMs)} ms · RSS after start ${(rss / 1024).toFixed(0)} MB · status ${ms(stats(result.status).median)} ms CLI, ${ms(stats(result.statusHttp).median)} ms HTTP${withList ? ` · list ${ms(stats(result.list).median)} ms CLI, ${ms(stats(result.listHttp).median)} ms HTTP (${result.listed} cycles listed)` : ''}`,
    );
    return result;
  } finally {
    await daemon.stop();
  }
}

/** `<label>: <what> <median> ms median (…) · ratio r× vs <one>` */
function compare(what, key, one, many, note) {
  const ratio = stats(many[key]).median / stats(one[key]).median;
  report.figure(
    `store ${what} with ${many.label}: ${describeMs(many[key])} · with ${one.label}: ${describeMs(one[key])} · ratio ${ratio.toFixed(2)}×${note ? ` · ${note}` : ''}`,
  );
}

function cycleNames(count) {
  const b32 = 'abcdefghijklmnopqrstuvwxyz234567';
  return Array.from({ length: count }, (_, i) => {
    const seconds = i % 86400;
    const hhmmss = [Math.floor(seconds / 3600), Math.floor(seconds / 60) % 60, seconds % 60].map((n) => String(n).padStart(2, '0')).join('');
    return `20260101T${hhmmss}Z-bn${b32[(i >> 15) & 31]}${b32[(i >> 10) & 31]}${b32[(i >> 5) & 31]}${b32[i & 31]}`;
  });
}

async function cyclesMode(firstMs) {
  const cycleMs = [firstMs];
  const one = await measure('1 cycle', true);

  const daemon = await startDaemon(stateDir);
  try {
    for (let i = 1; i < REAL_CYCLES; i += 1) {
      const start = Date.now();
      await fullCycle(daemon, repo);
      cycleMs.push(Date.now() - start);
    }
  } finally {
    await daemon.stop();
  }
  const real = await measure(`${REAL_CYCLES} real cycles`, true);

  // Grow the record to 1,000 cycles: package dirs copied under new ids, journal lines repeated.
  const realDirs = cycleDirs();
  const copies = cycleNames(TARGET_CYCLES - realDirs.length);
  copies.forEach((name, i) => cpSync(join(repo, '.session-handoff', realDirs[i % realDirs.length]), join(repo, '.session-handoff', name), { recursive: true }));
  const text = readFileSync(journal);
  for (let i = 1; i < Math.ceil(TARGET_CYCLES / REAL_CYCLES); i += 1) appendFileSync(journal, text);
  const many = await measure(`${cycleDirs().length} cycles (synthetic: ${REAL_CYCLES} real ones copied)`, true);

  const perCycle = stats(cycleMs);
  report.figure(
    `store: one real cycle over the API (now → HANDOFF_READY → accept → return → accept --return → CLOSED, 50-file repo, bare remote) ${ms(perCycle.median)} ms median (min ${ms(perCycle.min)}, max ${ms(perCycle.max)}, ${perCycle.n} cycles)`,
  );
  compare('handoff status --json', 'status', one, many);
  compare('GET /v1/status', 'statusHttp', one, many);
  compare('handoff list --json', 'list', one, many, `${many.listed} cycles listed, every manifest read and checked`);
  compare('GET /v1/cycles', 'listHttp', one, many);
  report.figure(
    `store daemon start (journal replay): ${ms(one.startMs)} ms with 1 cycle (${one.records} records, ${(one.bytes / 1e6).toFixed(2)} MB) · ${ms(real.startMs)} ms with ${REAL_CYCLES} real cycles (${real.records} records) · ${ms(many.startMs)} ms with 1,000 (${many.records} records, ${(many.bytes / 1e6).toFixed(1)} MB) · RSS after start ${(one.rss / 1024).toFixed(0)} → ${(many.rss / 1024).toFixed(0)} MB`,
  );
}

/** Fallback: a journal of readings, 1 record vs 10,000 real ones. */
async function readingsMode(why) {
  report.figure(
    `store: the cycle path does not work here (${why.slice(0, 200)}): measured with a journal of 1 vs 10,000 readings instead of 1 vs 1,000 cycles`,
  );
  const reading = { repo, source: 'claude-statusline', metric: 'five_hour', used_percent: 42, resets_at: Math.floor(Date.now() / 1000) + 6 * 3600 };
  removeDir(stateDir);
  let daemon = await startDaemon(stateDir);
  await api(daemon, 'POST', '/v1/signals', reading);
  await daemon.stop();
  const withList = runCli(stateDir, ['list', '--help']).code === 0;
  const one = await measure('1 record', withList);
  daemon = await startDaemon(stateDir);
  try {
    await autocannon({
      url: `http://127.0.0.1:${daemon.port}/v1/signals`,
      method: 'POST',
      headers: { host: `127.0.0.1:${daemon.port}`, 'content-type': 'application/json', authorization: `Bearer ${daemon.token}` },
      body: JSON.stringify(reading),
      connections: 4,
      amount: 9_999,
    });
    // A reading stamped before another but applied after it is refused as superseded: top up.
    while (lines() < 10_000) await api(daemon, 'POST', '/v1/signals', reading);
  } finally {
    await daemon.stop();
  }
  const many = await measure('10,000 records', withList);
  compare('handoff status --json', 'status', one, many);
  compare('GET /v1/status', 'statusHttp', one, many);
  if (withList) compare('handoff list --json', 'list', one, many);
  else report.figure('store handoff list: not built yet — not measured');
  report.figure(
    `store daemon start (journal replay): ${ms(one.startMs)} ms with 1 record · ${ms(many.startMs)} ms with 10,000 (${(many.bytes / 1e6).toFixed(1)} MB)`,
  );
}

try {
  makeRepo();
  // The first real cycle is also the probe: does the whole cycle path work here?
  let why = null;
  let firstMs = 0;
  const daemon = await startDaemon(stateDir);
  try {
    const start = Date.now();
    await fullCycle(daemon, repo);
    firstMs = Date.now() - start;
  } catch (error) {
    why = error.message;
  } finally {
    await daemon.stop();
  }
  if (why === null) {
    console.log(`# ${REAL_CYCLES} real cycles through the API, then grown to ${TARGET_CYCLES} cycles on record (synthetic copies)`);
    await cyclesMode(firstMs);
  } else {
    await readingsMode(why);
  }
} finally {
  removeDir(base);
}
report.summary();
