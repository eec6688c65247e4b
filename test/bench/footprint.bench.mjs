// The daemon's footprint: RSS (VmRSS from /proc/<pid>/status) at idle and after N minutes of
// 5 readings a second, and its CPU time (utime + stime from /proc/<pid>/stat) over 10 s of idle.
// Then, if the daemon has the Codex rollout watcher, the same idle CPU while it watches a CODEX_HOME
// of 10,000 rollout files with nothing changing (a restart with their offsets on record), and how
// long a first start with 10,000 unseen files takes.
//
// Targets (issues 16, 24): idle RSS with 1 workspace ≤ 60 MB and ≤ 64 MB after 200 readings; RSS under
// load and watching 10,000 Codex rollouts ≤ 80 MB, ready in ≤ 5 s; idle CPU ≈ 0, read as ≤ 0.5 % of one
// core (≤ 50 ms of CPU in 10 s). The floors are measured in the same run: a bare node and a bare fastify
// hello server (test/bench/fixtures/hello-fastify.mjs) after 200 POSTs, as it is and bundled the way the
// CLI is (scripts/bundle-options.mjs), with the daemon's V8 flags.
//
// Usage: node test/bench/footprint.bench.mjs [--short] [--minutes N]
//   default 10 minutes of load; --short or BENCH_SHORT=1: 30 s; BENCH_FOOTPRINT_MINUTES=N overrides.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { BUNDLE_OPTIONS } from '../../scripts/bundle-options.mjs';
import {
  api,
  BENCH_SHORT,
  clockTicks,
  cpuTicks,
  createReport,
  DAEMON_NODE_FLAGS,
  git,
  machine,
  ms,
  removeDir,
  requireBuild,
  rssKb,
  sleep,
  startDaemon,
  stats,
  tempBase,
} from './lib.mjs';

requireBuild();

const RSS_TARGET_MB = 80;
const IDLE_RSS_TARGET_MB = 60;
const READINGS_RSS_TARGET_MB = 64;
const READINGS = 200;
const CODEX_READY_TARGET_MS = 5000;
const IDLE_CPU_TARGET = 0.5; // % of one core
const IDLE_SECONDS = 10;
const RATE = 5; // readings per second
const ROLLOUTS = 10_000;
const flag = process.argv.indexOf('--minutes');
const MINUTES = Number(flag > 0 ? process.argv[flag + 1] : (process.env.BENCH_FOOTPRINT_MINUTES ?? (BENCH_SHORT ? 0.5 : 10)));
const FIRST_START_CAP_S = BENCH_SHORT ? 20 : 30;
const WATCHER = fileURLToPath(new URL('../../dist/daemon/ingest/codex-watch.js', import.meta.url));
const HELLO = fileURLToPath(new URL('./fixtures/hello-fastify.mjs', import.meta.url));
const HELLO_LIBRARIES = fileURLToPath(new URL('./fixtures/hello-libraries.mjs', import.meta.url));
/** Issue 36: the daemon's RSS within this of a bare fastify bundled the same way, idle and after READINGS readings. */
const SAME_WAY_RATIO = 1.1;

const report = createReport('footprint');
const mb = (kb) => (kb / 1024).toFixed(1);
console.log(`# footprint bench · ${machine()}`);
console.log(`# load: ${MINUTES} min of ${RATE} credible readings/s · idle CPU over ${IDLE_SECONDS} s · CLK_TCK ${clockTicks()}`);

/** CPU the process used over `seconds` of wall time, in ms and in % of one core. */
async function idleCpu(pid, seconds = IDLE_SECONDS) {
  const before = cpuTicks(pid);
  const start = process.hrtime.bigint();
  await sleep(seconds * 1000);
  const wall = Number(process.hrtime.bigint() - start) / 1e6;
  const cpuMs = ((cpuTicks(pid) - before) * 1000) / clockTicks();
  return { cpuMs, percent: (100 * cpuMs) / wall };
}

/** A hello server bundled the way the CLI is (scripts/bundle-options.mjs): the floor of a bundled program. */
async function bundled(dir, entry) {
  const outfile = join(dir, `${basename(entry, '.mjs')}-bundled.mjs`);
  await build({ ...BUNDLE_OPTIONS, entryPoints: [entry], outfile });
  return outfile;
}

/**
 * A process that prints its port and serves POST /hello; `null` script: a bare node that only waits.
 * Its RSS idle (3 s after its first post) and after READINGS posts.
 */
async function floorRss(script, ...scriptArgs) {
  const args = script === null ? ['-e', 'process.stdout.write("0\\n"); setInterval(() => {}, 1000)'] : [script, ...scriptArgs];
  const child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise((resolve) => child.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim()))));

    const post = () =>
      new Promise((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/hello', headers: { 'content-type': 'application/json' } }, (res) =>
          res.resume().on('end', resolve),
        );
        req.on('error', reject);
        req.end(JSON.stringify({ used_percent: 42 }));
      });
    // Idle as the daemon's is taken: 3 s after its first request (the daemon's workspace exists by then).
    if (port > 0) await post();
    await sleep(3000);
    const idle = rssKb(child.pid);
    if (port > 0) for (let i = 1; i < READINGS; i += 1) await post();
    await sleep(1000);
    return { idle, after: rssKb(child.pid) };
  } finally {
    child.kill('SIGKILL');
  }
}

const cpuLine = (cpu) => `${ms(cpu.cpuMs)} ms CPU in ${IDLE_SECONDS} s = ${cpu.percent.toFixed(2)} % of a core`;

const base = tempBase('footprint');
try {
  const repo = join(base, 'repo');
  git(base, ['init', '-q', '-b', 'main', repo]);
  const stateDir = join(base, 'state');
  const daemon = await startDaemon(stateDir);
  try {
    const resetsAt = Math.floor(Date.now() / 1000) + 6 * 3600;
    // The workspace exists before the idle measurement, as it would once an agent has reported.
    const first = await api(daemon, 'POST', '/v1/signals', { repo, source: 'claude-statusline', metric: 'five_hour', used_percent: 10, resets_at: resetsAt });
    if (first.body.code !== 'reading_recorded') throw new Error(`the first reading was not recorded: ${JSON.stringify(first.body)}`);
    await sleep(3000);
    const rssIdle = rssKb(daemon.pid);
    const cpuIdle = await idleCpu(daemon.pid);
    report.figure(
      `footprint idle (1 workspace, no Codex home): RSS ${mb(rssIdle)} MB (target ≤ ${IDLE_RSS_TARGET_MB} MB) ${report.verdict(rssIdle / 1024 <= IDLE_RSS_TARGET_MB, `idle RSS ${mb(rssIdle)} MB`)} · ${cpuLine(cpuIdle)} (target ≤ ${IDLE_CPU_TARGET} %) ${report.verdict(cpuIdle.percent <= IDLE_CPU_TARGET, `idle CPU ${cpuIdle.percent.toFixed(2)} %`)}`,
    );

    // The issue's figure: RSS once 200 readings came in, as fast as one client sends them.
    for (let i = 0; i < READINGS; i += 1) {
      const answer = await api(daemon, 'POST', '/v1/signals', {
        repo,
        source: 'claude-statusline',
        metric: i % 2 === 0 ? 'five_hour' : 'seven_day',
        used_percent: 11 + (i % 60),
        resets_at: resetsAt,
      });
      if (answer.body.code !== 'reading_recorded') throw new Error(`reading ${i} was not recorded: ${JSON.stringify(answer.body)}`);
    }
    await sleep(1000);
    const rssReadings = rssKb(daemon.pid);
    const floorDir = join(base, 'floor');
    mkdirSync(floorDir);
    const bareNode = (await floorRss(null)).after;
    const bareFastify = (await floorRss(HELLO)).after;
    const bundledFastify = await floorRss(await bundled(base, HELLO));
    const bundledLibraries = await floorRss(await bundled(base, HELLO_LIBRARIES), floorDir);
    report.figure(
      `footprint RSS after ${READINGS} readings: ${mb(rssReadings)} MB (target ≤ ${READINGS_RSS_TARGET_MB} MB) ${report.verdict(rssReadings / 1024 <= READINGS_RSS_TARGET_MB, `RSS after ${READINGS} readings ${mb(rssReadings)} MB`)} · floors in this run, same V8 flags (${DAEMON_NODE_FLAGS.join(' ') || 'none'}): bare node ${mb(bareNode)} MB, bare fastify hello after ${READINGS} POSTs ${mb(bareFastify)} MB, bundled as the CLI is ${mb(bundledFastify.after)} MB (the daemon is ${mb(rssReadings - bundledFastify.after)} MB above that)`,
    );
    // Issue 36's target against the bundled bare fastify, and the floor of the libraries the product is
    // built on (fixtures/hello-libraries.mjs), bundled the same way: what is left above it is the daemon's own code.
    const against = (daemonKb, floor) =>
      `${mb(daemonKb)} MB = ${(daemonKb / floor.fastify).toFixed(2)}× bundled bare fastify (${mb(floor.fastify)} MB; target ≤ ${SAME_WAY_RATIO}×) ${report.verdict(daemonKb / floor.fastify <= SAME_WAY_RATIO, `RSS ${(daemonKb / floor.fastify).toFixed(2)}× bundled bare fastify`)}, ${(daemonKb / floor.libraries).toFixed(2)}× bundled fastify + pino, xstate, chokidar, simple-git at work (${mb(floor.libraries)} MB)`;
    report.figure(`footprint idle vs its floors: ${against(rssIdle, { fastify: bundledFastify.idle, libraries: bundledLibraries.idle })}`);
    report.figure(
      `footprint after ${READINGS} readings vs its floors: ${against(rssReadings, { fastify: bundledFastify.after, libraries: bundledLibraries.after })}`,
    );

    // N minutes of 5 readings a second, on a fixed schedule (no drift), RSS sampled every 10 s.
    const journal = join(stateDir, 'journal.jsonl');
    const journalBefore = statSync(journal).size;
    const samples = [];
    const latencies = [];
    let failures = 0;
    const total = Math.round(MINUTES * 60 * RATE);
    const started = Date.now();
    const cpuBefore = cpuTicks(daemon.pid);
    for (let i = 0; i < total; i += 1) {
      const due = started + (i * 1000) / RATE;
      const wait = due - Date.now();
      if (wait > 0) await sleep(wait);
      const metric = i % 2 === 0 ? 'five_hour' : 'seven_day';
      const sent = process.hrtime.bigint();
      const answer = await api(daemon, 'POST', '/v1/signals', { repo, source: 'claude-statusline', metric, used_percent: 30 + (i % 40), resets_at: resetsAt });
      latencies.push(Number(process.hrtime.bigint() - sent) / 1e6);
      if (answer.body.code !== 'reading_recorded') failures += 1;
      if (i % (10 * RATE) === 0) {
        samples.push(rssKb(daemon.pid));
        if (i % (60 * RATE) === 0) console.log(`  ${((Date.now() - started) / 60000).toFixed(1)} min: RSS ${mb(samples.at(-1))} MB`);
      }
    }
    const loadSeconds = (Date.now() - started) / 1000;
    const loadCpuMs = ((cpuTicks(daemon.pid) - cpuBefore) * 1000) / clockTicks();
    const rssAfter = rssKb(daemon.pid);
    samples.push(rssAfter);
    const growth = statSync(journal).size - journalBefore;
    const rssStats = stats(samples);
    const lat = stats(latencies);
    const p99 = [...latencies].sort((a, b) => a - b)[Math.floor(latencies.length * 0.99)];
    report.figure(
      `footprint after ${MINUTES} min of ${RATE} readings/s (${total} readings, ${failures} not recorded): RSS ${mb(rssAfter)} MB (samples every 10 s: min ${mb(rssStats.min)}, median ${mb(rssStats.median)}, max ${mb(rssStats.max)}) (target ≤ ${RSS_TARGET_MB} MB) ${report.verdict(rssAfter / 1024 <= RSS_TARGET_MB, `RSS after the load ${mb(rssAfter)} MB`)}${rssStats.max / 1024 > RSS_TARGET_MB ? ` (but peaked at ${mb(rssStats.max)} MB between collections)` : ''} · CPU ${((100 * loadCpuMs) / (loadSeconds * 1000)).toFixed(2)} % of a core · reading latency ${ms(lat.median)} ms median, p99 ${ms(p99)} ms`,
    );
    report.figure(
      `footprint journal: +${(growth / 1e6).toFixed(2)} MB for ${total} readings (${(growth / Math.max(1, total)).toFixed(0)} B each) → ${(((growth / loadSeconds) * 86400) / 1e9).toFixed(2)} GB/day at ${RATE} readings/s (the journal is never compacted; a restart replays all of it)`,
    );
    await sleep(2000);
    const cpuAfter = await idleCpu(daemon.pid);
    report.figure(
      `footprint idle after the load: RSS ${mb(rssKb(daemon.pid))} MB · ${cpuLine(cpuAfter)} (target ≤ ${IDLE_CPU_TARGET} %) ${report.verdict(cpuAfter.percent <= IDLE_CPU_TARGET, `idle CPU after load ${cpuAfter.percent.toFixed(2)} %`)}`,
    );
  } finally {
    await daemon.stop();
  }

  // The Codex rollout watcher, if this daemon has one.
  if (!existsSync(WATCHER)) {
    report.figure('footprint codex watcher: skipped — the daemon has no Codex rollout watcher yet (dist/daemon/ingest/codex-watch.js is missing)');
  } else {
    const home = join(base, 'codex-home');
    const session = '019d0a8b-f6b9-7f61-b6c9-2050a0dbfbcd';
    const text =
      `${JSON.stringify({ timestamp: '2026-08-20T09:00:00.120Z', type: 'session_meta', payload: { id: session, timestamp: '2026-08-20T09:00:00.100Z', cwd: repo, originator: 'codex_cli_rs', cli_version: '0.159.0', source: 'cli', model_provider: 'openai' } })}\n` +
      `${JSON.stringify({ timestamp: '2026-08-20T09:00:05.900Z', type: 'event_msg', payload: { type: 'token_count', info: null, rate_limits: { limit_id: 'codex', limit_name: null, primary: { used_percent: 12.0, window_minutes: 300, resets_at: 1787234400 }, secondary: { used_percent: 43.0, window_minutes: 10080, resets_at: 1787648400 }, plan_type: 'plus' } } })}\n`;
    const files = {};
    for (let i = 0; i < ROLLOUTS; i += 1) {
      const dir = join(home, 'sessions', '2026', String(1 + Math.floor(i / 2800)).padStart(2, '0'), String(1 + (Math.floor(i / 100) % 28)).padStart(2, '0'));
      if (i % 100 === 0) mkdirSync(dir, { recursive: true });
      const path = join(dir, `rollout-2026-08-20T09-00-00-${String(i).padStart(8, '0')}-f6b9-7f61-b6c9-2050a0dbfbcd.jsonl`);
      writeFileSync(path, text);
      files[path] = { offset: Buffer.byteLength(text), cwd: repo, session_id: session };
    }

    // Steady state: a restart that finds every file's offset on record (the daemon's own format).
    const steadyDir = join(base, 'state-codex');
    mkdirSync(steadyDir, { mode: 0o700 });
    writeFileSync(join(steadyDir, 'codex-offsets.json'), `${JSON.stringify({ version: 1, files })}\n`, { mode: 0o600 });
    const watching = await startDaemon(steadyDir, { env: { CODEX_HOME: home }, timeoutMs: 300_000 });
    try {
      const tailing = readFileSync(join(steadyDir, 'daemon.log'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
        .find((line) => line.msg === 'tailing codex rollouts');
      await sleep(3000);
      const rss = rssKb(watching.pid);
      const cpu = await idleCpu(watching.pid);
      report.figure(
        `footprint codex watcher, ${ROLLOUTS} rollout files on record, nothing changing: start ${ms(watching.startMs)} ms (tailing ${tailing?.files ?? '?'} files) · RSS ${mb(rss)} MB (target ≤ ${RSS_TARGET_MB} MB) ${report.verdict(rss / 1024 <= RSS_TARGET_MB, `RSS watching ${ROLLOUTS} rollouts ${mb(rss)} MB`)} · ${cpuLine(cpu)} (target ≤ ${IDLE_CPU_TARGET} %) ${report.verdict(cpu.percent <= IDLE_CPU_TARGET, `idle CPU watching ${ROLLOUTS} rollouts ${cpu.percent.toFixed(2)} %`)}`,
      );
    } finally {
      await watching.stop();
    }

    // First start: no offsets on record yet, so every file is read once and its offset saved.
    const firstDir = join(base, 'state-codex-first');
    let first = null;
    try {
      first = await startDaemon(firstDir, { env: { CODEX_HOME: home }, timeoutMs: FIRST_START_CAP_S * 1000 });
      report.figure(
        `footprint codex watcher, first start with ${ROLLOUTS} unseen rollout files: ready in ${ms(first.startMs)} ms (target ≤ ${CODEX_READY_TARGET_MS} ms) ${report.verdict(first.startMs <= CODEX_READY_TARGET_MS, `Codex first start ${ms(first.startMs)} ms`)}`,
      );
    } catch (error) {
      if (!/did not write daemon.json/.test(error.message)) throw error;
      let seen = 0;
      try {
        seen = Object.keys(JSON.parse(readFileSync(join(firstDir, 'codex-offsets.json'), 'utf8')).files).length;
      } catch {
        seen = 0;
      }
      report.figure(
        `footprint codex watcher, first start with ${ROLLOUTS} unseen rollout files: NOT ready within ${FIRST_START_CAP_S} s (offsets saved for ${seen} of ${ROLLOUTS} files; the API is not listening meanwhile) ${report.verdict(false, `first start with ${ROLLOUTS} rollouts > ${FIRST_START_CAP_S} s`)}`,
      );
    } finally {
      await first?.stop();
    }
  }
} finally {
  removeDir(base);
}
report.summary();
