// `handoff install` on big config files: the installer edits its own bytes and leaves the rest, so
// its cost must grow linearly with the size of the file (issue 15: a 547 KB settings.json took 48 s
// and 6.3 GB in --dry-run, and 1.1 MB crashed half-way). Prints wall time and peak RSS of the CLI for
// settings.json of 0.5, 1 and 2 MB (claude: status line + hooks; gemini: hooks + GEMINI.md), --dry-run
// and a real install, and the figure against the target of one second for 2 MB.
// Usage: npm run bench  (HANDOFF_BENCH_RUNS=N to change the number of runs, default 5)
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_SHORT, CLI, createReport, describeMs, removeDir, requireBuild, stats, tempBase } from './lib.mjs';

const RUNS = Number(process.env.HANDOFF_BENCH_RUNS ?? (BENCH_SHORT ? 2 : 5));
const TARGET_MS = 1000;
const SIZES_MB = BENCH_SHORT ? [2] : [0.5, 1, 2];

requireBuild();
const base = tempBase('install');
const report = createReport('install');

/**
 * A settings file of about `mb` MB the way big ones are in the wild: permissions and env lists that
 * grew, with the user's own hooks near the end (so a diff has a long middle to cross), numbers
 * JSON.parse would change, a comment.
 */
function bigSettings(mb) {
  const allow = [];
  for (let i = 0; allow.join('').length < mb * 1024 * 1024; i += 1) allow.push(`    "Bash(./scripts/task-${i}.sh --flag ${'x'.repeat(40)})"`);
  return [
    '{',
    '  // grown by hand over the years',
    '  "budget": 12345678901234567890,',
    '  "ratio": 1.0,',
    '  "permissions": { "allow": [',
    allow.join(',\n'),
    '  ] },',
    '  "hooks": { "Stop": [ { "hooks": [ { "type": "command", "command": "notify" } ] } ] }',
    '}',
    '',
  ].join('\n');
}

/** Runs the CLI under /usr/bin/time when present, for peak RSS; wall time from here. */
function timed(args) {
  const start = process.hrtime.bigint();
  const result = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, CLI, ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const wall = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.error !== undefined) throw result.error;
  if (result.status !== 0) throw new Error(`install exited ${result.status}: ${result.stderr.slice(-500)}`);
  const rssKb = Number(result.stderr.trim().split('\n').at(-1));
  return { wall, rssMb: Number.isFinite(rssKb) ? rssKb / 1024 : NaN };
}

try {
  for (const agent of ['claude', 'gemini']) {
    for (const mb of SIZES_MB) {
      const text = bigSettings(mb);
      for (const mode of ['--dry-run', 'install']) {
        const walls = [];
        let rss = 0;
        for (let i = 0; i < RUNS; i += 1) {
          const dir = join(base, `${agent}-${mb}-${mode}-${i}`);
          const path = join(dir, 'settings.json');
          spawnSync('mkdir', ['-p', dir]);
          writeFileSync(path, text);
          const args = ['--state-dir', join(base, 'state'), 'install', agent, '--settings', path, ...(mode === '--dry-run' ? ['--dry-run'] : []), '--json'];
          const { wall, rssMb } = timed(args);
          walls.push(wall);
          rss = Math.max(rss, rssMb);
          if (mode === 'install' && !readFileSync(path, 'utf8').includes('"budget": 12345678901234567890,'))
            throw new Error('the install changed bytes outside its hooks');
          removeDir(dir);
        }
        const size = (Buffer.byteLength(text) / (1024 * 1024)).toFixed(2);
        report.figure(
          `${agent} ${mode === 'install' ? 'install  ' : '--dry-run'} ${size} MB settings.json: ${describeMs(walls)}, peak RSS ${rss.toFixed(0)} MB`,
        );
        if (mb === 2)
          report.verdict(
            stats(walls).median < TARGET_MS,
            `${agent} ${mode} of a 2 MB settings.json under ${TARGET_MS} ms (median ${stats(walls).median.toFixed(0)} ms)`,
          );
      }
    }
  }
  // In process, without node start and CLI load: the merge and the diff alone, on the 2 MB file.
  const agents = await import(new URL('../../dist/adapters/agents/index.js', import.meta.url).href);
  const big = bigSettings(2);
  const invocation = { handoff: 'handoff', stateDir: null };
  for (const [agent, merge] of [
    ['claude', (text) => agents.mergeClaudeSettings(text, invocation, 'settings.json').text],
    ['gemini', (text) => agents.mergeGeminiSettings(text, invocation, 'settings.json')],
  ]) {
    const times = [];
    for (let i = 0; i < RUNS + 2; i += 1) {
      const start = process.hrtime.bigint();
      const after = merge(big);
      agents.unifiedDiff('settings.json', big, after);
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    report.figure(`${agent} merge + diff in process, 2.05 MB: ${describeMs(times.slice(2))}`);
  }
  // The same command on a file of a few bytes: what starting node and loading the CLI cost here.
  const tiny = [];
  for (let i = 0; i < RUNS; i += 1) {
    const path = join(base, `tiny-${i}.json`);
    writeFileSync(path, '{}\n');
    tiny.push(timed(['--state-dir', join(base, 'state'), 'install', 'claude', '--settings', path, '--dry-run', '--json']).wall);
  }
  report.figure(`baseline: claude --dry-run on a 3-byte settings.json: ${describeMs(tiny)} (node start and CLI load)`);
} finally {
  removeDir(base);
}
report.summary();
