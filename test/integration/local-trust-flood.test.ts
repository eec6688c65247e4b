import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { callDaemon } from '../../daemon/cli/client.js';
import { isProcessAlive } from '../../daemon/store/index.js';
import { cli, startDaemon } from '../support/daemon.js';
import { tempRepo } from '../support/git.js';

/**
 * How many half-open connections the flood holds. 20,000 by default, as the issue asks; CI on a small
 * machine can set HANDOFF_FLOOD_CONNECTIONS lower (the test then says what it ran).
 */
const CONNECTIONS = Number(process.env['HANDOFF_FLOOD_CONNECTIONS'] ?? 20_000);
/** Per flooding process, so each stays below the usual descriptor limits. */
const PER_PROCESS = 10_000;
/** The other user where the machine allows it: nobody. Else a second process of the same user. */
const OTHER_USER = process.getuid?.() === 0 ? { uid: 65_534, gid: 65_534 } : {};

/**
 * The flooder: connects `count` times to 127.0.0.1:`port` (at most 256 handshakes in flight), never
 * sends a byte, never closes its side (allowHalfOpen keeps what the daemon closes), holds them for
 * `holdMs` once all are open, prints one JSON line and exits. A hard deadline ends it in any case.
 */
const FLOODER = `
const net = require('node:net');
const [port, count, holdMs, deadlineMs] = process.argv.slice(1).map(Number);
setTimeout(() => finish('deadline'), deadlineMs).unref();
let started = 0, inflight = 0, opened = 0, failed = 0, closedByPeer = 0, finished = false;
const sockets = [];
const errors = {};
function finish(why) {
  if (finished) return;
  finished = true;
  process.stdout.write(JSON.stringify({ why, opened, failed, closedByPeer, errors }) + '\\n', () => process.exit(0));
}
function more() {
  while (inflight < 256 && started < count) {
    started += 1;
    inflight += 1;
    let connected = false;
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    socket.on('connect', () => { connected = true; inflight -= 1; opened += 1; more(); });
    socket.on('end', () => { closedByPeer += 1; });
    socket.on('error', (error) => {
      errors[error.code] = (errors[error.code] || 0) + 1;
      if (!connected) { inflight -= 1; failed += 1; more(); }
    });
    sockets.push(socket);
  }
  if (started === count && inflight === 0) setTimeout(() => finish('held'), holdMs);
}
more();
`;

interface FloodReport {
  readonly why: string;
  readonly opened: number;
  readonly failed: number;
  readonly closedByPeer: number;
  readonly errors: Record<string, number>;
}

function flood(port: number, count: number, holdMs: number): Promise<FloodReport> {
  const args = ['-c', `ulimit -n ${count + 100} && exec "$0" "$@"`, process.execPath, '-e', FLOODER, String(port), String(count), String(holdMs), '90000'];
  const child = spawn('bash', args, { ...OTHER_USER, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      try {
        resolve(JSON.parse(out) as FloodReport);
      } catch {
        reject(new Error(`the flooder exited with ${code}: ${out}${err}`));
      }
    });
  });
}

const openDescriptors = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;

describe('the daemon outlives abuse', () => {
  it(`the owner's status answers within 1 s while another user holds ${CONNECTIONS} half-open connections to the port`, async () => {
    const daemon = await startDaemon();
    const repo = tempRepo();
    try {
      expect((await cli(daemon.stateDir, ['status', '--json'], repo)).json.code).toBe('status');
      const baseline = openDescriptors(daemon.pid);
      const processes = Math.ceil(CONNECTIONS / PER_PROCESS);
      const flooding = Promise.all(
        Array.from({ length: processes }, (_, i) => flood(daemon.port, Math.min(PER_PROCESS, CONNECTIONS - i * PER_PROCESS), 3_000)),
      );
      let done = false;
      void flooding.finally(() => (done = true));

      const answers: { ms: number; code: string }[] = [];
      const cliRuns: { ms: number; code: number }[] = [];
      let maxDescriptors = baseline;
      while (!done) {
        const started = performance.now();
        const envelope = await callDaemon(daemon.stateDir, { method: 'GET', path: '/v1/status', query: { repo }, timeoutMs: 1_000 });
        answers.push({ ms: performance.now() - started, code: envelope.code });
        maxDescriptors = Math.max(maxDescriptors, openDescriptors(daemon.pid));
        if (answers.length % 10 === 1) {
          const before = performance.now();
          const run = await cli(daemon.stateDir, ['status', '--json'], repo);
          cliRuns.push({ ms: performance.now() - before, code: run.code });
        }
        await sleep(50);
      }
      const reports = await flooding;
      const opened = reports.reduce((sum, r) => sum + r.opened, 0);
      const closedByPeer = reports.reduce((sum, r) => sum + r.closedByPeer, 0);
      const slowest = Math.max(...answers.map((a) => a.ms));
      console.log(
        `flood of ${CONNECTIONS} (${processes} process(es), ${OTHER_USER.uid === undefined ? 'same uid' : `uid ${OTHER_USER.uid}`}): ` +
          `${opened} opened, ${closedByPeer} closed by the daemon; flooder errors ${JSON.stringify(reports.map((r) => r.errors))}; ` +
          `owner status over the socket: ${answers.length} answers, slowest ${slowest.toFixed(0)} ms; ` +
          `\`handoff status\` CLI: ${cliRuns.map((r) => r.ms.toFixed(0)).join(', ')} ms; daemon descriptors ${baseline} → max ${maxDescriptors}`,
      );
      expect(reports.map((r) => r.why)).toEqual(reports.map(() => 'held'));
      expect(opened).toBe(CONNECTIONS);
      expect(answers.every((a) => a.code === 'status')).toBe(true);
      expect(slowest).toBeLessThan(1_000);
      expect(cliRuns.every((r) => r.code === 0)).toBe(true);
      // Connections over the limit are closed at accept: the daemon's descriptors stay bounded.
      expect(maxDescriptors).toBeLessThan(baseline + 128 + 64);
      expect(isProcessAlive(daemon.pid)).toBe(true);
      expect((await cli(daemon.stateDir, ['status', '--json'], repo)).json.code).toBe('status');
    } finally {
      await daemon.stop();
    }
  }, 180_000);

  // prlimit lowers the limit of the running daemon: at start node needs more descriptors than it keeps.
  it.skipIf(!existsSync('/usr/bin/prlimit'))(
    'out of descriptors, the daemon refuses connections instead of crashing, and serves again after',
    async () => {
      const daemon = await startDaemon();
      // Fewer descriptors than the port's connection limit: accept() itself fails with EMFILE.
      const limit = openDescriptors(daemon.pid) + 40;
      execFileSync('/usr/bin/prlimit', ['--pid', String(daemon.pid), `--nofile=${limit}:${limit}`]);
      const repo = tempRepo();
      try {
        const report = await flood(daemon.port, 1_000, 2_000);
        expect(report.why).toBe('held');
        expect(isProcessAlive(daemon.pid)).toBe(true);
        expect(daemon.child.exitCode).toBeNull();
        // libuv answers EMFILE on accept by closing the pending connections (its reserve-descriptor trick);
        // when even that fails node emits 'error' on the server, which listeners.ts logs instead of crashing.
        expect(report.closedByPeer).toBeGreaterThan(0);
        console.log(`descriptor limit ${limit}: flood of 1000 → ${report.opened} opened, ${report.closedByPeer} closed by the daemon; daemon alive`);
        expect((await cli(daemon.stateDir, ['status', '--json'], repo)).json.code).toBe('status');
      } finally {
        await daemon.stop();
      }
    },
    120_000,
  );
});
