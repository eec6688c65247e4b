// Headless Claude Code kills its StopFailure hook about 90 ms after starting it. The installed hook is a
// shell line that spools the payload into the state dir (spooledEventCommand); `handoff hook
// claude-event` does the same from node. This measures, from the spawn, when the spooled file has its
// final name (the payload is safe from then on) for both, next to `node -e 0` measured in the same run
// (alternated, so load hits all alike).
// Usage: node test/bench/event-spool.bench.mjs  (HANDOFF_BENCH_RUNS=N, default 30)
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, rmSync, watch } from 'node:fs';
import { join } from 'node:path';
import { CLI, removeDir, requireBuild, stats, tempBase } from './lib.mjs';

requireBuild();
const { spooledEventCommand } = await import('../../dist/adapters/agents/index.js');

const RUNS = Number(process.env.HANDOFF_BENCH_RUNS ?? 30);
const WARMUP = 3;
/** Claude Code's kill, as observed in `claude -p` (2.1.328). */
const KILL_MS = 90;
const SPOOLED = /^\d{13}-[0-9a-f]{12}\.json$/;

const base = tempBase('event-spool');
const stateDir = join(base, 'state');
const spool = join(stateDir, 'spool');
mkdirSync(spool, { recursive: true });
chmodSync(stateDir, 0o700);
const input = JSON.stringify({ session_id: 's', cwd: base, hook_event_name: 'StopFailure', error: 'rate_limit', error_details: '429' });

const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;

function timeBaseline() {
  return new Promise((resolve) => {
    const start = process.hrtime.bigint();
    spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' }).once('exit', () => resolve(ms(start)));
  });
}

/** { safe, exit }: ms from spawn to the payload's final name in the spool, and to the hook's exit. */
function timeHook(command, args) {
  return new Promise((resolve) => {
    let safe = null;
    let exit = null;
    const done = () => {
      if (safe === null || exit === null) return;
      watcher.close();
      for (const name of readdirSync(spool)) rmSync(join(spool, name));
      resolve({ safe, exit });
    };
    const watcher = watch(spool, () => {
      if (safe === null && readdirSync(spool).some((name) => SPOOLED.test(name))) {
        safe = ms(start);
        done();
      }
    });
    const start = process.hrtime.bigint();
    const child = spawn(command, args, { stdio: ['pipe', 'ignore', 'inherit'] });
    child.stdin.end(input);
    child.once('exit', () => {
      exit = ms(start);
      done();
    });
  });
}

const NODE_HOOK = [process.execPath, [CLI, 'hook', 'claude-event', '--state-dir', stateDir]];
const SHELL_HOOK = ['/bin/sh', ['-c', spooledEventCommand(spool)]];
const node = [];
const safe = [];
const exit = [];
const shellSafe = [];
try {
  for (let i = 0; i < WARMUP; i += 1) {
    await timeBaseline();
    await timeHook(...NODE_HOOK);
    await timeHook(...SHELL_HOOK);
  }
  for (let i = 0; i < RUNS; i += 1) {
    node.push(await timeBaseline());
    const run = await timeHook(...NODE_HOOK);
    safe.push(run.safe);
    exit.push(run.exit);
    shellSafe.push((await timeHook(...SHELL_HOOK)).safe);
  }
} finally {
  removeDir(base);
}

const fmt = (value) => value.toFixed(1).padStart(7);
const rows = [
  ['node -e 0 (exit)', stats(node)],
  ['node hook: safe', stats(safe)],
  ['node hook: exit', stats(exit)],
  ['installed sh: safe', stats(shellSafe)],
];
console.log(`handoff hook claude-event, ${RUNS} runs each after ${WARMUP} warm-up runs; ms from spawn`);
console.log(`${'what'.padEnd(22)}${'min'.padStart(7)} ${'median'.padStart(7)}${'max'.padStart(7)}`);
for (const [label, s] of rows) console.log(`${label.padEnd(22)}${fmt(s.min)} ${fmt(s.median)}${fmt(s.max)}`);
const late = (values) => values.filter((value) => value > KILL_MS).length;
console.log(`safe only after Claude Code's ${KILL_MS} ms kill: node hook ${late(safe)} of ${RUNS} runs, installed shell line ${late(shellSafe)} of ${RUNS}`);
