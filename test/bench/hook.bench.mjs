/* global process, console */
// The status-line hook runs after every assistant message: it must cost about what starting node
// costs. Prints min / median / max wall time of `handoff hook claude-statusline` with a real payload,
// daemon up and daemon down, next to `node -e 0` measured in the same run, and the median ratios.
// Usage: npm run bench  (HANDOFF_BENCH_RUNS=N to change the number of runs, default 30)
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const RUNS = Number(process.env.HANDOFF_BENCH_RUNS ?? 30);
const WARMUP = 3;
const TARGET_UP = 1.5;
const TARGET_DOWN = 2;
const CLI = fileURLToPath(new URL('../../dist/daemon/cli/main.js', import.meta.url));
const FIXTURE = new URL('../../../shared/fixtures/telemetry/claude-statusline/subscriber-v2.1.2xx.json', import.meta.url);

if (!existsSync(CLI)) {
  console.error(`${CLI} is missing: run \`npm run build\` first`);
  process.exit(64);
}

const base = realpathSync(mkdtempSync(join(tmpdir(), 'handoff-bench-')));
const stateDir = join(base, 'state');
const repo = join(base, 'repo');
execFileSync('git', ['init', '-q', repo]);

// The fixture's resets lie in the past: move them into the future so the daemon counts the readings.
const now = Math.floor(Date.now() / 1000);
const payload = JSON.parse(readFileSync(FIXTURE, 'utf8'));
payload.cwd = repo;
payload.workspace = { ...payload.workspace, current_dir: repo, project_dir: repo };
payload.rate_limits.five_hour.resets_at = now + 3600;
payload.rate_limits.seven_day.resets_at = now + 6 * 86400;
const input = JSON.stringify(payload);

function timeRun(args) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { input, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return { ms, stdout: result.stdout.trim() };
}

const hook = ['--', CLI, 'hook', 'claude-statusline', '--state-dir', stateDir].slice(1);
const baseline = ['-e', '0'];

/** Alternates the two commands so drift (CPU frequency, cache) hits both alike. */
function measure(label) {
  for (let i = 0; i < WARMUP; i += 1) {
    timeRun(baseline);
    timeRun(hook);
  }
  const node = [];
  const ours = [];
  let line = '';
  for (let i = 0; i < RUNS; i += 1) {
    node.push(timeRun(baseline).ms);
    const run = timeRun(hook);
    ours.push(run.ms);
    line = run.stdout;
  }
  return { label, node, ours, line };
}

const stats = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { min: sorted[0], median, max: sorted[sorted.length - 1] };
};

async function startDaemon() {
  const child = spawn(process.execPath, [CLI, 'daemon', '--state-dir', stateDir, '--port', '0'], { stdio: 'ignore' });
  for (let waited = 0; !existsSync(join(stateDir, 'daemon.json')); waited += 25) {
    if (waited > 10_000) throw new Error('the daemon did not start within 10 s');
    await sleep(25);
  }
  return child;
}

const daemon = await startDaemon();
let up;
try {
  up = measure('daemon up');
} finally {
  daemon.kill('SIGTERM');
  await new Promise((resolve) => daemon.once('exit', resolve));
}
const down = measure('daemon down');

const fmt = (ms) => ms.toFixed(1).padStart(7);
console.log(`handoff hook claude-statusline, ${RUNS} runs each (after ${WARMUP} warm-up), wall time in ms`);
console.log(`${'what'.padEnd(26)}${'min'.padStart(7)}${'median'.padStart(8)}${'max'.padStart(7)}   ratio (median / node -e 0)`);
let met = true;
for (const [run, target] of [[up, TARGET_UP], [down, TARGET_DOWN]]) {
  const node = stats(run.node);
  const ours = stats(run.ours);
  const ratio = ours.median / node.median;
  met &&= ratio <= target;
  console.log(`${`node -e 0 (${run.label})`.padEnd(26)}${fmt(node.min)} ${fmt(node.median)}${fmt(node.max)}`);
  console.log(`${`hook, ${run.label}`.padEnd(26)}${fmt(ours.min)} ${fmt(ours.median)}${fmt(ours.max)}   ${ratio.toFixed(2)}x (target <= ${target}x)`);
  console.log(`${''.padEnd(26)}printed: ${run.line}`);
}
console.log(met ? 'targets met' : 'targets NOT met');
