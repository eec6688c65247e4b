// `handoff --version` is what a user or a script runs first: it must cost about what starting node
// costs, not what loading commander and every command module costs. Prints min / median / max wall
// time of `node -e 0`, `handoff --version` (answered in main.js) and `handoff --version --json` (the
// same answer through the whole program, the path --version took before), alternated in one run,
// and the median ratios to node.
// Usage: npm run bench  (HANDOFF_BENCH_RUNS=N to change the number of runs, default 20)
import { spawnSync } from 'node:child_process';
import { CLI, createReport, requireBuild, stats } from './lib.mjs';

const RUNS = Number(process.env.HANDOFF_BENCH_RUNS ?? 20);
const WARMUP = 2;
const TARGET = 1.5;

requireBuild();
const commands = [
  { label: 'node -e 0', args: ['-e', '0'] },
  { label: 'handoff --version', args: [CLI, '--version'] },
  { label: 'through the program', args: [CLI, '--version', '--json'] },
];

function timeRun(args) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

for (let i = 0; i < WARMUP; i += 1) for (const { args } of commands) timeRun(args);
const times = commands.map(() => []);
for (let i = 0; i < RUNS; i += 1) commands.forEach(({ args }, n) => times[n].push(timeRun(args)));

const report = createReport('version');
const [node, fast, slow] = times.map(stats);
const fmt = (ms) => ms.toFixed(1).padStart(7);
report.figure(`wall time in ms over ${RUNS} runs each:${''.padEnd(6)}${'min'.padStart(7)} ${'median'.padStart(7)}${'max'.padStart(7)}   median ratio to node`);
commands.forEach(({ label }, n) => {
  const s = [node, fast, slow][n];
  const ratio = s.median / node.median;
  const verdict = n === 1 ? `  (target <= ${TARGET}x: ${report.verdict(ratio <= TARGET, '--version near node')})` : '';
  report.figure(`${label.padEnd(42)}${fmt(s.min)} ${fmt(s.median)}${fmt(s.max)}   ${ratio.toFixed(2)}x${verdict}`);
});
report.summary();
