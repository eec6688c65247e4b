// A year of use: does the daemon's cost grow with its history? A state dir is grown with 2,000,000
// readings from ~67,000 agent sessions and 2,000 whole cycles, through the daemon's own code paths
// (the built registry, workspace machine, journal with its deltas, coalesced readings and compaction,
// in this process), then the real daemon is started on it and measured against an empty state dir:
// journal bytes on disk, start time, RSS after start, `handoff status` and `handoff list`.
//
// The cycles' drains are SCRIPTED: the same events the drain runner sends (waited, six steps,
// checkpoint verified, accept, return leg, accept --return), without running git, so no package
// directory is written for them; every figure line says so. The clock is simulated: 15 s between
// readings, so 2,000,000 readings span about a year.
//
// Usage: node test/bench/year.bench.mjs [--short]   (--short: 200,000 readings and 200 cycles)
import { appendFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { BENCH_SHORT, createReport, describeMs, git, machine, ms, removeDir, requireBuild, rssKb, runCli, startDaemon, stats, tempBase } from './lib.mjs';

requireBuild();
const dist = (path) => new URL(`../../dist/${path}`, import.meta.url).href;
const { loadConfig } = await import(dist('daemon/config.js'));
const { createLogger } = await import(dist('daemon/logger.js'));
const { Journal, openStateDir } = await import(dist('daemon/store/index.js'));
const { WorkspaceRegistry } = await import(dist('daemon/workspaces/registry.js'));
const { createWorkspaceJournal } = await import(dist('daemon/workspaces/workspace-journal.js'));
const { DRAIN_STEPS } = await import(dist('protocol/index.js'));

const READINGS = Number(process.env.HANDOFF_BENCH_READINGS ?? (BENCH_SHORT ? 200_000 : 2_000_000));
const CYCLES = Number(process.env.HANDOFF_BENCH_CYCLES ?? (BENCH_SHORT ? 200 : 2_000));
const READINGS_PER_SESSION = 30;
const STEP_MS = 15_000;
/** How often the coalesced readings are written, in readings (the daemon does it every 5 s). */
const FLUSH_EVERY = 20;
const CLI_RUNS = 7;
const IDENTITY = { GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@localhost', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@localhost' };

const report = createReport('year');
console.log(`# year-of-use bench · ${machine()}`);
console.log(
  `# ${READINGS.toLocaleString('en')} readings and ${CYCLES.toLocaleString('en')} cycles (scripted drains, no git) through the registry and journal, then the real daemon`,
);

const base = tempBase('year');
const repo = join(base, 'repo');

function makeRepo() {
  git(base, ['init', '-q', '-b', 'main', repo]);
  appendFileSync(join(repo, 'README.md'), '# year\n');
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'init'], { env: { ...process.env, ...IDENTITY } });
}

/** Grows a state dir through the daemon's own registry and journal. */
async function grow(stateDir) {
  const { dir } = await openStateDir(stateDir, { uid: process.getuid() });
  const config = await loadConfig(dir);
  const logger = createLogger(new Writable({ write: (_chunk, _enc, done) => done() }), 'warn');
  const { journal } = await Journal.open(join(dir, 'journal.jsonl'));
  let at = Date.parse('2026-01-01T00:00:00Z');
  let entropy = 0;
  const b32 = 'abcdefghijklmnopqrstuvwxyz234567';
  const meta = () => ({ at, entropy: Array.from({ length: 6 }, (_, i) => b32[(entropy >> (5 * i)) & 31]).join('') });
  const workspaceJournal = createWorkspaceJournal(journal, {
    compactAfterBytes: config.journal.compact_after_bytes,
    snapshot: () => registry.snapshotRecords(),
    log: logger,
  });
  const registry = new WorkspaceRegistry({
    config,
    append: (record) => workspaceJournal.append(record),
    meta: () => {
      entropy += 1;
      return meta();
    },
    log: logger,
    onOpen: async () => undefined,
    // The drain is scripted below.
    effect: () => undefined,
  });
  const send = async (body) => (await registry.dispatch(repo, body)).outcome;
  const iso = () => new Date(at).toISOString();
  const record = (step) => ({ at: iso(), sha256: step === 'package' ? entropy.toString(16).padStart(64, '0') : null, summary: { scripted: true } });
  const checkpoint = { mechanism: 'handoff_branch', ref: 'refs/heads/handoff/x', commit: '0'.repeat(40), verified: true };

  async function drain() {
    await send({ type: 'DRAIN_WAITED', why: 'no_wait' });
    for (const step of DRAIN_STEPS) await send({ type: 'DRAIN_STEP_DONE', step, record: record(step) });
  }

  async function cycle() {
    await send({ type: 'NOW', reason: 'year bench', wait: false });
    await drain();
    await send({ type: 'CHECKPOINT_VERIFIED', checkpoint, remote: null });
    const accepted = await send({ type: 'HANDOFF_ACCEPTED', executor: 'receiver', receiver_root: repo, token: null });
    const token = accepted.data.token;
    await send({ type: 'RETURN_START', token, wait: false });
    await drain();
    await send({ type: 'RETURN_READY', token, checkpoint });
    await send({ type: 'RETURN_ACCEPTED', executor: 'primary', token: null });
  }

  const started = process.hrtime.bigint();
  const cycleEvery = Math.max(1, Math.floor(READINGS / CYCLES));
  const metrics = ['context', 'five_hour', 'seven_day'];
  let cycles = 0;
  for (let i = 0; i < READINGS; i += 1) {
    at += STEP_MS;
    const session = Math.floor(i / READINGS_PER_SESSION);
    const reading = {
      source: 'claude-statusline',
      metric: metrics[i % 3],
      used_percent: 20 + (i % 50),
      resets_at: null,
      observed_at: iso(),
      raw_sha256: null,
      executor: `session-${session}`,
    };
    await send({ type: 'READING', reading });
    if (i % FLUSH_EVERY === 0) await registry.flushReadings();
    if (i % cycleEvery === cycleEvery - 1 && cycles < CYCLES) {
      await cycle();
      cycles += 1;
    }
  }
  await registry.flushReadings();
  await journal.close();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { seconds, cycles, compactions: journal.stats.compactions, sessions: Math.ceil(READINGS / READINGS_PER_SESSION) };
}

const STARTS = 3;

async function measure(label, stateDir) {
  // Start times are noisy on a loaded machine: the median of a few starts.
  const starts = [];
  for (let i = 1; i < STARTS; i += 1) {
    const probe = await startDaemon(stateDir);
    starts.push(probe.startMs);
    await probe.stop();
  }
  const daemon = await startDaemon(stateDir);
  starts.push(daemon.startMs);
  try {
    const rss = rssKb(daemon.pid);
    const cli = (args, code) => {
      const times = [];
      for (let i = 0; i < CLI_RUNS; i += 1) {
        const run = runCli(stateDir, [...args, '--json', '--repo', repo]);
        if (run.code !== 0 || run.envelope?.code !== code)
          throw new Error(`handoff ${args.join(' ')} failed (${run.code}): ${run.stdout.slice(0, 500)}${run.stderr}`);
        times.push(run.ms);
      }
      return times;
    };
    const result = {
      label,
      startMs: stats(starts).median,
      rss,
      bytes: statSync(join(stateDir, 'journal.jsonl')).size,
      status: cli(['status'], 'status'),
      list: cli(['list'], 'cycles'),
    };
    console.log(
      `  ${label}: journal ${(result.bytes / 1e6).toFixed(2)} MB · start ${ms(result.startMs)} ms · RSS ${(rss / 1024).toFixed(0)} MB · status ${ms(stats(result.status).median)} ms · list ${ms(stats(result.list).median)} ms`,
    );
    return result;
  } finally {
    await daemon.stop();
  }
}

try {
  makeRepo();
  const emptyDir = join(base, 'state-empty');
  const yearDir = join(base, 'state-year');
  // The empty state dir knows the workspace (one status), nothing else.
  const empty = await measure('empty state dir', emptyDir);
  const grown = await grow(yearDir);
  report.figure(
    `year: grew ${READINGS.toLocaleString('en')} readings from ${grown.sessions.toLocaleString('en')} sessions and ${grown.cycles.toLocaleString('en')} cycles (SCRIPTED drains, no git) in ${grown.seconds.toFixed(0)} s (${((grown.seconds * 1e6) / READINGS).toFixed(0)} µs a reading, cycles included) · ${grown.compactions} compactions`,
  );
  const year = await measure('after a year', yearDir);
  const ratio = (key) => stats(year[key]).median / stats(empty[key]).median;
  report.figure(
    `year journal on disk: ${(year.bytes / 1e3).toFixed(0)} kB after a year vs ${(empty.bytes / 1e3).toFixed(1)} kB empty (bounded: compaction keeps it under max(1 MiB, 4× the live state))`,
  );
  report.figure(`year daemon start: ${ms(year.startMs)} ms vs ${ms(empty.startMs)} ms empty · ratio ${(year.startMs / empty.startMs).toFixed(2)}×`);
  report.figure(
    `year RSS after start: ${(year.rss / 1024).toFixed(0)} MB vs ${(empty.rss / 1024).toFixed(0)} MB empty · ratio ${(year.rss / empty.rss).toFixed(2)}×`,
  );
  report.figure(`year handoff status --json: ${describeMs(year.status)} vs ${describeMs(empty.status)} empty · ratio ${ratio('status').toFixed(2)}×`);
  report.figure(
    `year handoff list --json: ${describeMs(year.list)} vs ${describeMs(empty.list)} empty · ratio ${ratio('list').toFixed(2)}× (scripted cycles leave no package on disk: list reads only the workspace)`,
  );
  const target = (what, ok) => report.figure(`year target: ${what}: ${report.verdict(ok, what)}`);
  target('daemon start within 1.2× of an empty state dir', year.startMs <= 1.2 * empty.startMs);
  target('RSS after start within 1.2× of an empty state dir', year.rss <= 1.2 * empty.rss);
  target('handoff status within 1.2× of an empty state dir', ratio('status') <= 1.2);
  target('handoff list within 1.2× of an empty state dir', ratio('list') <= 1.2);
} finally {
  removeDir(base);
}
report.summary();
