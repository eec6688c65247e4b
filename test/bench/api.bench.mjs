// Requests per second of `POST /v1/signals` (bearer token, schema validation, a real repository)
// against a bare fastify hello-world POST route, each in its own process, loaded with autocannon in
// the same run, alternating, beside the daemon's cheapest route (`POST /v1/hello`, its floor). Beside
// requests/s each row prints the serving process's CPU per request (utime + stime from /proc, all its
// threads): on a shared machine it moves far less with the load of others than requests/s does. Two kinds of readings:
//   credible     — recorded: a reading that moves no stage is telemetry, kept in memory and written
//                  coalesced (journal.readings_flush_seconds), not fsync'd per request;
//   not credible — `used_percent: null`: validated and answered, changes nothing, no journal write.
//
// Usage: node test/bench/api.bench.mjs [--short]
//   HANDOFF_BENCH_API_SECONDS (default 5; --short 3) per measurement, HANDOFF_BENCH_API_ROUNDS
//   (default 3; --short 1), HANDOFF_BENCH_API_CONNECTIONS (default 8)
import { spawn } from 'node:child_process';
import { closeSync, fsyncSync, openSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { api, BENCH_SHORT, clockTicks, cpuTicks, createReport, git, machine, ms, removeDir, requireBuild, startDaemon, stats, tempBase } from './lib.mjs';

requireBuild();

const TARGET = 0.5;
const SECONDS = Number(process.env.HANDOFF_BENCH_API_SECONDS ?? (BENCH_SHORT ? 3 : 5));
const ROUNDS = Number(process.env.HANDOFF_BENCH_API_ROUNDS ?? (BENCH_SHORT ? 1 : 3));
const CONNECTIONS = Number(process.env.HANDOFF_BENCH_API_CONNECTIONS ?? 8);
const HELLO = fileURLToPath(new URL('./fixtures/hello-fastify.mjs', import.meta.url));

async function startHello() {
  const child = spawn(process.execPath, [HELLO], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
      if (out.includes('\n')) resolve(Number(out.trim()));
    });
    child.once('exit', (code) => reject(new Error(`the hello-world server exited with ${code}`)));
  });
  return {
    port,
    pid: child.pid,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function load(port, path, body, headers = {}) {
  return autocannon({
    url: `http://127.0.0.1:${port}${path}`,
    method: 'POST',
    headers: { host: `127.0.0.1:${port}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    connections: CONNECTIONS,
    pipelining: 1,
    duration: SECONDS,
  });
}

/** One autocannon run, checked: every answer a 2xx, no socket errors; with the server's CPU per request. */
async function measure(what, pid, port, path, body, headers) {
  const cpuBefore = cpuTicks(pid);
  const result = await load(port, path, body, headers);
  const cpuUs = ((cpuTicks(pid) - cpuBefore) * 1e6) / clockTicks();
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(`${what}: ${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts`);
  }
  return {
    rps: result.requests.average,
    total: result.requests.total,
    p50: result.latency.p50,
    p97_5: result.latency.p97_5,
    p99: result.latency.p99,
    max: result.latency.max,
    cpuUsPerRequest: cpuUs / Math.max(1, result.requests.total),
  };
}

/** The raw cost of one small write + fsync on the state dir's file system, for scale. */
function fsyncMs(dir) {
  const path = join(dir, 'fsync-probe');
  const fd = openSync(path, 'a');
  const times = [];
  for (let i = 0; i < 200; i += 1) {
    const start = process.hrtime.bigint();
    writeSync(fd, `${'x'.repeat(2000)}\n`);
    fsyncSync(fd);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  closeSync(fd);
  return stats(times);
}

const report = createReport('api');
console.log(`# api bench · ${machine()}`);
console.log(
  `# autocannon, ${CONNECTIONS} connections, ${SECONDS} s per measurement, ${ROUNDS} round(s) alternating hello → floor → credible → not credible, 1 s warm-up each`,
);

const base = tempBase('api');
const repo = join(base, 'repo');
git(base, ['init', '-q', '-b', 'main', repo]);
git(repo, ['commit', '-q', '--allow-empty', '-m', 'init'], {
  env: { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@l', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@l' },
});
const stateDir = join(base, 'state');
const daemon = await startDaemon(stateDir);
const hello = await startHello();
try {
  const auth = { authorization: `Bearer ${daemon.token}` };
  const resetsAt = Math.floor(Date.now() / 1000) + 6 * 3600;
  const credible = { repo, source: 'claude-statusline', metric: 'five_hour', used_percent: 42, resets_at: resetsAt };
  const notCredible = { repo, source: 'claude-statusline', metric: 'five_hour', used_percent: null, resets_at: resetsAt };
  const helloBody = credible;

  // The two readings do what they claim before they are measured.
  const first = await api(daemon, 'POST', '/v1/signals', credible);
  const second = await api(daemon, 'POST', '/v1/signals', notCredible);
  if (first.body.code !== 'reading_recorded' || second.body.code !== 'reading_not_credible') {
    throw new Error(`unexpected answers: ${JSON.stringify(first.body).slice(0, 300)} / ${JSON.stringify(second.body).slice(0, 300)}`);
  }

  const cases = [
    { key: 'hello', what: 'bare fastify POST /hello (same JSON body)', pid: hello.pid, port: hello.port, path: '/hello', body: helloBody, headers: {} },
    // The daemon's own floor: the same server, listeners, hooks and schema compiler, the cheapest route
    // (no token, no workspace, no machine). What is above it is the signals path itself.
    {
      key: 'floor',
      what: 'POST /v1/hello on the daemon (its cheapest route: the floor of its server)',
      pid: daemon.pid,
      port: daemon.port,
      path: '/v1/hello',
      body: { nonce: 'api-bench-floor-nonce' },
      headers: {},
    },
    {
      key: 'credible',
      what: 'POST /v1/signals, credible reading (recorded in memory, written coalesced)',
      pid: daemon.pid,
      port: daemon.port,
      path: '/v1/signals',
      body: credible,
      headers: auth,
    },
    {
      key: 'notCredible',
      what: 'POST /v1/signals, not credible (used_percent null: no journal write)',
      pid: daemon.pid,
      port: daemon.port,
      path: '/v1/signals',
      body: notCredible,
      headers: auth,
    },
  ];
  const results = Object.fromEntries(cases.map((c) => [c.key, []]));
  for (const c of cases) {
    await autocannon({
      url: `http://127.0.0.1:${c.port}${c.path}`,
      method: 'POST',
      headers: { host: `127.0.0.1:${c.port}`, 'content-type': 'application/json', ...c.headers },
      body: JSON.stringify(c.body),
      connections: CONNECTIONS,
      duration: 1,
    });
  }
  const journal = join(stateDir, 'journal.jsonl');
  const journalBefore = statSync(journal).size;
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const c of cases) {
      const run = await measure(c.what, c.pid, c.port, c.path, c.body, c.headers);
      results[c.key].push(run);
      console.log(
        `  round ${round + 1}: ${c.key.padEnd(11)} ${run.rps.toFixed(0).padStart(6)} req/s · ${run.cpuUsPerRequest.toFixed(0)} µs CPU/request · latency p50 ${run.p50} ms, p97.5 ${run.p97_5} ms, p99 ${run.p99} ms, max ${run.max} ms`,
      );
    }
  }
  const journalGrowth = statSync(journal).size - journalBefore;

  const median = (key, field) => stats(results[key].map((r) => r[field])).median;
  const range = (key) => {
    const s = stats(results[key].map((r) => r.rps));
    return `${s.median.toFixed(0)} req/s median (min ${s.min.toFixed(0)}, max ${s.max.toFixed(0)}, ${s.n} × ${SECONDS} s)`;
  };
  const lat = (key) => `latency p50 ${median(key, 'p50')} ms, p97.5 ${median(key, 'p97_5')} ms, p99 ${median(key, 'p99')} ms`;
  const cpu = (key) => `${median(key, 'cpuUsPerRequest').toFixed(0)} µs CPU/request`;
  const helloRps = median('hello', 'rps');
  for (const c of cases) {
    const rps = median(c.key, 'rps');
    const ratio = rps / helloRps;
    const tail =
      c.key === 'hello'
        ? 'the baseline'
        : c.key === 'floor'
          ? `ratio ${ratio.toFixed(2)}× (no target: what no route of this server can beat)`
          : `ratio ${ratio.toFixed(2)}× (target ≥ ${TARGET}×) ${report.verdict(ratio >= TARGET, `api ${c.key} ${ratio.toFixed(2)}× < ${TARGET}×`)}`;
    report.figure(`api ${c.what}: ${range(c.key)} · ${cpu(c.key)} · ${lat(c.key)} · ${tail}`);
  }
  const fsync = fsyncMs(stateDir);
  const records = results.credible.reduce((sum, r) => sum + r.total, 0);
  report.figure(
    `api journal: ${records} credible readings measured wrote ${(journalGrowth / 1e6).toFixed(1)} MB (${(journalGrowth / Math.max(1, records)).toFixed(0)} B per record) · one 2 kB write+fsync on this disk ${ms(fsync.median)} ms median (min ${ms(fsync.min)}, max ${ms(fsync.max)}, 200 runs)`,
  );
} finally {
  await hello.stop();
  await daemon.stop();
  removeDir(base);
}
report.summary();
