// The status-line hook runs after every assistant message: it must cost about what starting node
// costs. Prints min / median / max wall time of `handoff hook claude-statusline` with a real payload,
// daemon up and daemon down, next to `node -e 0` measured in the same run, and the median ratios.
// Usage: npm run bench  (HANDOFF_BENCH_RUNS=N to change the number of runs, default 30)
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, git, removeDir, requireBuild, startDaemon, stats, tempBase } from './lib.mjs';

const RUNS = Number(process.env.HANDOFF_BENCH_RUNS ?? 30);
const WARMUP = 3;
const TARGETS = { up: 1.5, down: 2 };
const FIXTURE = new URL('../fixtures/reference-telemetry/claude-statusline/subscriber-v2.1.2xx.json', import.meta.url);

requireBuild();
const base = tempBase('hook');
const stateDir = join(base, 'state');
const repo = join(base, 'repo');
git(base, ['init', '-q', repo]);

// The fixture's resets lie in the past: move them into the future so the daemon counts the readings.
const now = Math.floor(Date.now() / 1000);
const payload = JSON.parse(readFileSync(FIXTURE, 'utf8'));
payload.cwd = repo;
payload.workspace = { ...payload.workspace, current_dir: repo, project_dir: repo };
payload.rate_limits.five_hour.resets_at = now + 3600;
payload.rate_limits.seven_day.resets_at = now + 6 * 86_400;
const input = JSON.stringify(payload);

const hook = [CLI, 'hook', 'claude-statusline', '--state-dir', stateDir];
const baseline = ['-e', '0'];

function timeRun(args) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { input, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return { ms, stdout: result.stdout.trim() };
}

/** Alternates the two commands so drift (CPU frequency, caches, other load) hits both alike. */
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
  return { label, node: stats(node), ours: stats(ours), line };
}

let results;
try {
  const daemon = await startDaemon(stateDir);
  let up;
  try {
    up = measure('up');
  } finally {
    await daemon.stop();
  }
  results = [up, measure('down')];
} finally {
  removeDir(base);
}

const fmt = (ms) => ms.toFixed(1).padStart(7);
console.log(`handoff hook claude-statusline, ${RUNS} runs each after ${WARMUP} warm-up runs; wall time in ms`);
console.log(`${'what'.padEnd(24)}${'min'.padStart(7)} ${'median'.padStart(7)}${'max'.padStart(7)}   median ratio to node -e 0`);
let met = true;
for (const { label, node, ours, line } of results) {
  const ratio = ours.median / node.median;
  met &&= ratio <= TARGETS[label];
  console.log(`${`node -e 0 (daemon ${label})`.padEnd(24)}${fmt(node.min)} ${fmt(node.median)}${fmt(node.max)}`);
  console.log(
    `${`hook, daemon ${label}`.padEnd(24)}${fmt(ours.min)} ${fmt(ours.median)}${fmt(ours.max)}   ${ratio.toFixed(2)}x (target <= ${TARGETS[label]}x)`,
  );
  console.log(`${''.padEnd(24)}printed: ${line}`);
}
console.log(met ? 'hook: every target met' : 'hook: targets MISSED');
