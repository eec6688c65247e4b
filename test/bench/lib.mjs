// Shared pieces of the benchmarks (not a benchmark itself: run-all.mjs only runs *.bench.mjs).
// Plain Node ESM: the benches drive the built CLI (dist/) and real daemons, like a user would.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

// What `handoff` runs: package.json's `bin`, the bundle `npm run build` writes (scripts/bundle.mjs).
const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
export const CLI = fileURLToPath(new URL(`../../${PACKAGE.bin.handoff}`, import.meta.url));

// A bench measures what it starts itself: a hook or a command that met no daemon must not start one
// (daemon/cli/auto-start.ts), which would outlive the bench's temp dir and skew the "down" figures.
process.env.HANDOFF_NO_AUTO_START ??= '1';

/** Stops with a clear line when the build is missing (run through `npm run bench`). */
export function requireBuild() {
  if (!existsSync(CLI)) {
    console.error(`${CLI} is missing: run \`npm run build\` first (or \`npm run bench\`)`);
    process.exit(64);
  }
}

/** A private temp dir under the OS tmp dir, realpath'd (the daemon keys workspaces by realpath). */
export function tempBase(prefix) {
  return realpathSync(mkdtempSync(join(tmpdir(), `handoff-bench-${prefix}-`)));
}

export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}

export const BENCH_SHORT = process.env.BENCH_SHORT === '1' || process.argv.includes('--short');

export function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { min: sorted[0], median, max: sorted[sorted.length - 1], n: sorted.length };
}

export const ms = (value) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));

/** `<median> ms median (min a, max b, N runs)` */
export function describeMs(values) {
  const s = stats(values);
  return `${ms(s.median)} ms median (min ${ms(s.min)}, max ${ms(s.max)}, ${s.n} runs)`;
}

/** Collects figure lines and target verdicts; `summary()` prints them again at the end. */
export function createReport(name) {
  const lines = [];
  const misses = [];
  let verdicts = 0;
  return {
    figure(line) {
      lines.push(line);
      console.log(line);
    },
    note(line) {
      console.log(`  ${line}`);
    },
    /** A target verdict: `OK` or `MISSED`, remembered for the summary. */
    verdict(ok, what) {
      verdicts += 1;
      if (!ok) misses.push(what);
      return ok ? 'OK' : 'MISSED';
    },
    summary() {
      console.log(`\n== ${name}: summary ==`);
      for (const line of lines) console.log(line);
      if (verdicts === 0) console.log(`${name}: no target is set for these figures (ratios only)`);
      else console.log(misses.length === 0 ? `${name}: every target met` : `${name}: targets MISSED: ${misses.join('; ')}`);
    },
  };
}

export function git(cwd, args, options = {}) {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 << 20, ...options }).trim();
}

/** Runs the built CLI synchronously with a pinned state dir; returns wall time and the Envelope. */
export function runCli(stateDir, args, { cwd, env } = {}) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, [CLI, '--state-dir', stateDir, ...args], {
    cwd,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    timeout: 600_000,
  });
  const wall = Number(process.hrtime.bigint() - start) / 1e6;
  let envelope = null;
  if (args.includes('--json')) {
    try {
      envelope = JSON.parse(result.stdout);
    } catch {
      envelope = null;
    }
  }
  return { ms: wall, code: result.status, stdout: result.stdout, stderr: result.stderr, envelope };
}

/** The V8 flags the service unit and the start on demand give the daemon (daemon/node-flags.ts). */
export const { DAEMON_NODE_FLAGS } = await import(new URL('../../dist/daemon/node-flags.js', import.meta.url).href).catch(() => ({ DAEMON_NODE_FLAGS: [] }));

/**
 * Spawns `handoff daemon` on an ephemeral loopback port (as test/support/daemon.ts does) and waits
 * for its daemon.json; the token is read from the state dir. It runs with the V8 flags of a daemon the
 * CLI starts (DAEMON_NODE_FLAGS) unless `nodeArgs` says otherwise.
 */
export async function startDaemon(stateDir, { env = {}, nodeArgs = DAEMON_NODE_FLAGS, timeoutMs = 120_000 } = {}) {
  const started = process.hrtime.bigint();
  // HANDOFF_BENCH_CPU_PROF=<dir>: each daemon writes a V8 CPU profile there when it stops (node refuses --cpu-prof in NODE_OPTIONS).
  const profile = process.env.HANDOFF_BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.HANDOFF_BENCH_CPU_PROF}`] : [];
  const child = spawn(process.execPath, [...nodeArgs, ...profile, CLI, 'daemon', '--state-dir', stateDir, '--port', '0'], {
    env: { ...process.env, CODEX_HOME: join(stateDir, '..', 'no-codex-home'), ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const infoPath = join(stateDir, 'daemon.json');
  const deadline = Date.now() + timeoutMs;
  let info = null;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the daemon exited (${child.exitCode ?? child.signalCode}): ${stderr}`);
    if (existsSync(infoPath)) {
      try {
        const parsed = JSON.parse(readFileSync(infoPath, 'utf8'));
        if (parsed.pid === child.pid) info = parsed;
      } catch {
        // half-written: written atomically, so this is a foreign or stale file; look again
      }
    }
    if (info !== null) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the daemon did not write daemon.json within ${timeoutMs} ms: ${stderr}`);
    }
    await sleep(10);
  }
  const startMs = Number(process.hrtime.bigint() - started) / 1e6;
  const token = readFileSync(join(stateDir, 'token'), 'utf8').trim();
  return {
    child,
    pid: child.pid,
    port: info.port,
    token,
    stateDir,
    startMs,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** One authenticated JSON request to the daemon (keep-alive off: one call, one connection). */
export function api(daemon, method, path, body) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: daemon.port,
        method,
        path,
        headers: {
          host: `127.0.0.1:${daemon.port}`,
          authorization: `Bearer ${daemon.token}`,
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          try {
            resolve({ status: res.statusCode, body: JSON.parse(text) });
          } catch {
            resolve({ status: res.statusCode, body: text });
          }
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Polls GET /v1/status until the workspace is in `state` (a blocked drain or a timeout throws). */
export async function waitForState(daemon, repo, state, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await api(daemon, 'GET', `/v1/status?repo=${encodeURIComponent(repo)}`);
    const view = answer.body?.data;
    if (view?.state === state) return view;
    if (view?.blocked) throw new Error(`the drain is blocked: ${view.blocked}`);
    if (Date.now() > deadline) throw new Error(`still ${view?.state ?? answer.status} after ${timeoutMs} ms, waiting for ${state}`);
    await sleep(10);
  }
}

async function expectCode(daemon, path, body, code) {
  const answer = await api(daemon, 'POST', path, body);
  if (answer.body?.code !== code)
    throw new Error(`POST ${path} answered ${answer.status} ${answer.body?.code ?? ''}: ${JSON.stringify(answer.body?.error ?? answer.body).slice(0, 300)}`);
  return answer.body;
}

/**
 * From HANDOFF_READY to CLOSED over the API, in the same checkout: a receiver accepts, hands back
 * (return leg drain), the primary accepts the return. Throws when any of it is not built or fails.
 */
export async function closeCycle(daemon, repo) {
  await expectCode(daemon, '/v1/accept', { repo, as: 'bench-receiver', latest: true }, 'accepted');
  await api(daemon, 'POST', '/v1/return', { repo, wait: false });
  await waitForState(daemon, repo, 'RETURN_HANDOFF_READY');
  await expectCode(daemon, '/v1/accept', { repo, as: 'bench-primary', latest: true, return: true }, 'accepted');
  await waitForState(daemon, repo, 'CLOSED');
}

/** One whole cycle over the API: NOW (no wait) → HANDOFF_READY → … → CLOSED. */
export async function fullCycle(daemon, repo) {
  await api(daemon, 'POST', '/v1/now', { repo, wait: false, reason: 'bench' });
  await waitForState(daemon, repo, 'HANDOFF_READY');
  await closeCycle(daemon, repo);
}

/** The daemon's pino log lines (JSON), for per-step timing. */
export function readLog(stateDir) {
  const path = join(stateDir, 'daemon.log');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      try {
        return JSON.parse(line);
      } catch {
        return null;
      }
    })
    .filter((line) => line !== null);
}

/** VmRSS (kB) from /proc/<pid>/status. */
export function rssKb(pid) {
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : NaN;
}

/** utime + stime of a process, in clock ticks, from /proc/<pid>/stat (fields 14 and 15). */
export function cpuTicks(pid) {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

let ticksPerSecond = null;
export function clockTicks() {
  if (ticksPerSecond === null) {
    const result = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    ticksPerSecond = Number(result.stdout.trim()) || 100;
  }
  return ticksPerSecond;
}

export function machine() {
  const cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';
  const cores = spawnSync('nproc', { encoding: 'utf8' }).stdout.trim();
  const load = loadavg()
    .map((n) => n.toFixed(1))
    .join(' ');
  return `${cores} cores (nproc) · ${cpu} · Node ${process.version} · git ${git(process.cwd(), ['--version']).replace('git version ', '')} · load average now ${load}`;
}

export { sleep };
