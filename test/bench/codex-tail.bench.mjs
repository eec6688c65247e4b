// The Codex rollout tail with 10,000 rollout files in CODEX_HOME: time to ready and RSS at a first start
// (every file is history: only its size is noted), the inotify watches it holds (one per directory,
// never one per file), how soon a line appended to one old file moves the state, the size of the one
// offsets record, a restart with that record, and idle CPU while nothing changes. Figures only.
//
// Usage: node test/bench/codex-tail.bench.mjs [--short]   (--short: 2,000 files)
import { appendFileSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  api,
  BENCH_SHORT,
  clockTicks,
  cpuTicks,
  createReport,
  git,
  machine,
  ms,
  removeDir,
  requireBuild,
  rssKb,
  sleep,
  startDaemon,
  tempBase,
} from './lib.mjs';

requireBuild();

const ROLLOUTS = BENCH_SHORT ? 2_000 : 10_000;
const PER_DAY = 100;
const IDLE_SECONDS = 5;
const report = createReport('codex-tail');
const mb = (kb) => (kb / 1024).toFixed(1);
console.log(`# codex tail bench · ${machine()} · ${ROLLOUTS} rollout files, ${PER_DAY} a day directory`);

/** inotify watches held by the process: one `inotify wd:` line per watch in the fdinfo of its inotify fds. */
function inotifyWatches(pid) {
  let watches = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target = '';
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed between the listing and the read
    }
    if (target !== 'anon_inode:inotify') continue;
    watches += readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('inotify wd:')).length;
  }
  return watches;
}

async function idleCpuPercent(pid) {
  const before = cpuTicks(pid);
  const start = Date.now();
  await sleep(IDLE_SECONDS * 1000);
  return (100 * ((cpuTicks(pid) - before) * 1000)) / clockTicks() / (Date.now() - start);
}

const line = (object) => `${JSON.stringify(object)}\n`;
const tokenCount = (fiveHour, weekly) =>
  line({
    timestamp: new Date().toISOString(),
    type: 'event_msg',
    payload: {
      type: 'token_count',
      info: null,
      rate_limits: {
        limit_id: 'codex',
        primary: { used_percent: fiveHour, window_minutes: 300, resets_at: Math.floor(Date.now() / 1000) + 3600 },
        secondary: { used_percent: weekly, window_minutes: 10080, resets_at: Math.floor(Date.now() / 1000) + 86_400 },
        plan_type: 'plus',
      },
    },
  });

const base = tempBase('codex-tail');
try {
  const repo = join(base, 'repo');
  git(base, ['init', '-q', '-b', 'main', repo]);
  const home = join(base, 'codex-home');
  const paths = [];
  for (let i = 0; i < ROLLOUTS; i += 1) {
    const dir = join(
      home,
      'sessions',
      '2026',
      String(1 + Math.floor(i / (PER_DAY * 28))).padStart(2, '0'),
      String(1 + (Math.floor(i / PER_DAY) % 28)).padStart(2, '0'),
    );
    if (i % PER_DAY === 0) mkdirSync(dir, { recursive: true });
    const path = join(dir, `rollout-2026-08-20T09-00-00-${String(i).padStart(8, '0')}-f6b9-7f61-b6c9-2050a0dbfbcd.jsonl`);
    writeFileSync(
      path,
      line({
        timestamp: '2026-08-20T09:00:00.120Z',
        type: 'session_meta',
        payload: { id: `session-${i}`, cwd: repo, originator: 'codex_cli_rs', cli_version: '0.160.0' },
      }) + tokenCount(12, 43),
    );
    paths.push(path);
  }
  const dirs = Math.ceil(ROLLOUTS / PER_DAY);

  const stateDir = join(base, 'state');
  let daemon = await startDaemon(stateDir, { env: { CODEX_HOME: home }, timeoutMs: 300_000 });
  try {
    await sleep(2000);
    report.figure(
      `codex tail, first start with ${ROLLOUTS} unseen rollout files (history): ready in ${ms(daemon.startMs)} ms · RSS ${mb(rssKb(daemon.pid))} MB · inotify watches ${inotifyWatches(daemon.pid)} (directories: ${dirs} day + month/year/sessions/home)`,
    );

    // A session that was running before the start writes its next line: read from the end of its history.
    const target = paths[Math.floor(ROLLOUTS / 2)];
    const sent = Date.now();
    appendFileSync(target, tokenCount(93, 43));
    for (;;) {
      const status = await api(daemon, 'GET', `/v1/status?repo=${encodeURIComponent(repo)}`);
      if (status.body?.data?.state === 'EVACUATE') break;
      if (Date.now() - sent > 30_000) throw new Error('the appended line was not read within 30 s');
      await sleep(5);
    }
    report.figure(`codex tail: a line appended to one of ${ROLLOUTS} old files moved the state in ${Date.now() - sent} ms`);
    await sleep(1000);
    const offsets = JSON.parse(readFileSync(join(stateDir, 'codex-offsets.json'), 'utf8'));
    report.figure(
      `codex tail: offsets record ${statSync(join(stateDir, 'codex-offsets.json')).size} B for ${Object.keys(offsets.files).length} file(s) read (files never grown are not recorded) · idle CPU ${(await idleCpuPercent(daemon.pid)).toFixed(2)} % of a core over ${IDLE_SECONDS} s`,
    );
  } finally {
    await daemon.stop();
  }

  // Every file on record, as after a long life of the daemon: a restart stats each, opens none.
  const saved = JSON.parse(readFileSync(join(stateDir, 'codex-offsets.json'), 'utf8'));
  for (const path of paths) saved.files[path] ??= { offset: statSync(path).size, cwd: repo, session_id: null };
  writeFileSync(join(stateDir, 'codex-offsets.json'), `${JSON.stringify(saved)}\n`, { mode: 0o600 });
  const recordBefore = statSync(join(stateDir, 'codex-offsets.json')).size;
  daemon = await startDaemon(stateDir, { env: { CODEX_HOME: home }, timeoutMs: 300_000 });
  try {
    await sleep(2000);
    report.figure(
      `codex tail, restart with all ${ROLLOUTS} files in the offsets record (${(recordBefore / 1e6).toFixed(2)} MB; ${statSync(join(stateDir, 'codex-offsets.json')).size} B once the unchanged ones went back to history): ready in ${ms(daemon.startMs)} ms · RSS ${mb(rssKb(daemon.pid))} MB · inotify watches ${inotifyWatches(daemon.pid)} · idle CPU ${(await idleCpuPercent(daemon.pid)).toFixed(2)} % of a core over ${IDLE_SECONDS} s`,
    );
  } finally {
    await daemon.stop();
  }
} finally {
  removeDir(base);
}
report.summary();
