import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DRAIN_STEPS, type DrainStep } from '../../protocol/index.js';
import { api, DaemonDiedAtStart, exited, startDaemon, type DaemonProcess, type RawResponse } from '../support/daemon.js';
import { git, tempDir, tempRepo } from '../support/git.js';
import { twoClones } from '../support/scenario.js';
import { bump, newFigures, saveFigures, TransitionLog } from './support/figures.js';
import { readJournal } from './support/journal-read.js';
import { readAllManifests } from './support/manifests.js';
import { Rng, seedFrom } from './support/rng.js';

/*
 * kill -9 harness: a real daemon (the built CLI) is SIGKILLed at random moments while clients send
 * signals, churn the lease and walk handoff cycles (evacuate, accept, return, accept the return) —
 * and, in a quarter of the lives, right after a random drain step's effect
 * (HANDOFF_TEST_KILL_AFTER_STEP). Every restart is checked: the journal recovers (a torn tail is cut
 * and reported), every acknowledged write is in it, the state served is the state journaled, tokens
 * never go down, every manifest parses and matches its hashes, and an interrupted drain finishes.
 */

const SOAK = process.env['SOAK'] === '1';
const KILLS = Number(process.env['KILLS'] ?? (SOAK ? 1_000 : 60));
const SEED = seedFrom('KILL_SEED');
const rng = new Rng(SEED);
const figures = newFigures();
const transitions = new TransitionLog();
const started = Date.now();

type Ack =
  | { kind: 'reading'; root: string; observed_at: string; percent: number }
  | { kind: 'acquire'; root: string; executor: string; token: number }
  | { kind: 'renew' | 'release'; root: string; token: number }
  | { kind: 'break'; root: string; reason: string }
  | { kind: 'now'; root: string; reason: string }
  | { kind: 'accept'; root: string; token: number; leg: 'out' | 'return' }
  | { kind: 'return'; root: string; token: number };

interface Pair {
  readonly a: string;
  readonly b: string;
  readonly remote: string;
}

interface Status {
  state: string;
  blocked: string | null;
  cycle: { id: string; drain: { manifests: string[] }; return_drain: { manifests: string[] } | null; checkpoint: { commit: string | null } | null } | null;
  lease: { holder: { executor: string; token: number } | null; last_token: number };
}

class DaemonGone extends Error {}

const acks: Ack[] = [];
let observedCounter = 0;
let reasonCounter = 0;

async function call(d: DaemonProcess, method: 'GET' | 'POST', path: string, body?: unknown): Promise<RawResponse> {
  figures.requests += 1;
  try {
    const response = await api(d, method, path, body);
    expect(response.status, `${method} ${path}: ${response.text.slice(0, 300)}`).toBeLessThan(500);
    return response;
  } catch (error) {
    if (error instanceof Error && error.name === 'AssertionError') throw error;
    throw new DaemonGone((error as Error).message);
  }
}

async function status(d: DaemonProcess, repo: string): Promise<Status> {
  const got = await call(d, 'GET', `/v1/status?repo=${encodeURIComponent(repo)}`);
  expect(got.status).toBe(200);
  return got.body.data as Status;
}

const changed = (got: RawResponse) => (got.body.data as { changed?: boolean } | null)?.changed === true;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const alive = (d: DaemonProcess) => d.child.exitCode === null && d.child.signalCode === null;

// ------------------------------------------------------------------------------------------------
// Load: each worker loops until the daemon dies.

async function signals(d: DaemonProcess, roots: readonly string[]): Promise<void> {
  while (alive(d)) {
    const burst = rng.int(1, 6);
    await Promise.all(
      Array.from({ length: burst }, async () => {
        const root = rng.pick(roots);
        // A unique observation time names each write; low percentages keep the handoff flow ours.
        const observed_at = new Date(Date.now() - 1000 + (observedCounter++ % 1000)).toISOString();
        // Up to the PREPARE band: some readings move NORMAL ↔ PREPARE (journaled), none evacuates.
        const percent = rng.int(0, 88);
        const got = await call(d, 'POST', '/v1/signals', {
          repo: root,
          source: 'claude-statusline',
          metric: rng.pick(['five_hour', 'context', 'weekly']),
          used_percent: percent,
          observed_at,
          executor: `s${rng.int(1, 3)}`,
        });
        // Only a reading that moved the machine is durable when acknowledged; others are telemetry, written coalesced.
        if (got.body.code === 'reading_recorded' && (got.body.data as { durable?: boolean } | null)?.durable === true)
          acks.push({ kind: 'reading', root, observed_at, percent });
      }),
    );
  }
}

async function leaseChurn(d: DaemonProcess, root: string): Promise<void> {
  while (alive(d)) {
    const executor = `exec-${rng.int(1, 4)}`;
    const got = await call(d, 'POST', '/v1/lease/acquire', { repo: root, as: executor });
    if (got.body.code === 'lease_acquired') {
      const token = Number((got.body.data as { token: number }).token);
      acks.push({ kind: 'acquire', root, executor, token });
      if (rng.chance(0.5) && (await call(d, 'POST', '/v1/lease/renew', { repo: root, token })).body.code === 'lease_renewed')
        acks.push({ kind: 'renew', root, token });
      if (rng.chance(0.7) && (await call(d, 'POST', '/v1/lease/release', { repo: root, token })).body.code === 'lease_released')
        acks.push({ kind: 'release', root, token });
    } else if (rng.chance(0.3)) {
      const reason = `kill9 break ${reasonCounter++}`;
      if ((await call(d, 'POST', '/v1/lease/break', { repo: root, reason })).body.code === 'lease_broken') acks.push({ kind: 'break', root, reason });
    }
  }
}

/** Walks the pair's cycle one step forward, whatever state it is in. */
async function flow(d: DaemonProcess, pair: Pair): Promise<void> {
  while (alive(d)) {
    const s = await status(d, pair.a);
    const cycle = s.cycle?.id ?? '';
    switch (s.state) {
      case 'NORMAL':
      case 'PREPARE':
      case 'CLOSED': {
        writeFileSync(join(pair.a, 'f.txt'), `work ${observedCounter++}\n`);
        const reason = `kill9 now ${reasonCounter++}`;
        const got = await call(d, 'POST', '/v1/now', { repo: pair.a, wait: false, reason });
        if (got.body.code === 'evacuation_started' && changed(got)) acks.push({ kind: 'now', root: pair.a, reason });
        break;
      }
      case 'HANDOFF_READY': {
        const got = await call(d, 'POST', '/v1/accept', { repo: pair.b, cycle, as: 'receiver', checkout: true });
        expect([200, 409], got.text).toContain(got.status);
        if (got.body.code === 'accepted') acks.push({ kind: 'accept', root: pair.a, token: Number((got.body.data as { token: number }).token), leg: 'out' });
        break;
      }
      case 'TAKEOVER': {
        if (s.cycle?.return_drain != null) {
          if (s.blocked !== null) await call(d, 'POST', '/v1/resume', { repo: pair.b });
          await sleep(40);
          break;
        }
        const token = s.lease.holder?.token;
        const got = await call(d, 'POST', '/v1/return', { repo: pair.b, wait: false, ...(token === undefined ? {} : { token }) });
        if (got.body.code === 'return_started' && changed(got) && token !== undefined) acks.push({ kind: 'return', root: pair.a, token });
        break;
      }
      case 'RETURN_HANDOFF_READY': {
        const got = await call(d, 'POST', '/v1/accept', { repo: pair.a, cycle, return: true, as: 'primary', checkout: true });
        if (got.body.code === 'accepted') {
          acks.push({ kind: 'accept', root: pair.a, token: Number((got.body.data as { token: number }).token), leg: 'return' });
          bump(figures, 'cycles_closed');
        }
        break;
      }
      default:
        if (s.blocked !== null) await call(d, 'POST', '/v1/resume', { repo: pair.a });
        await sleep(40);
    }
  }
}

// ------------------------------------------------------------------------------------------------
// What must hold after every restart.

type JournalRecord = {
  root: string;
  state: string;
  event: Record<string, unknown> & { type: string };
  context: { lease: Status['lease'] & { offered: boolean }; cycle: Status['cycle'] };
};

/** Each acknowledged write's identity, and the same identities read off the journal: a set lookup per ack. */
function ackKey(ack: Ack): string {
  switch (ack.kind) {
    case 'reading':
      return `${ack.root}|READING|${ack.observed_at}`;
    case 'acquire':
      return `${ack.root}|LEASE_ACQUIRE|${ack.executor}|${ack.token}`;
    case 'renew':
    case 'release':
      return `${ack.root}|${ack.kind === 'renew' ? 'LEASE_RENEW' : 'LEASE_RELEASE'}|${ack.token}`;
    case 'break':
      return `${ack.root}|LEASE_BREAK|${ack.reason}`;
    case 'now':
      return `${ack.root}|NOW|${ack.reason}`;
    case 'accept':
      return `${ack.root}|${ack.leg === 'out' ? 'HANDOFF_ACCEPTED' : 'RETURN_ACCEPTED'}|${ack.token}`;
    case 'return':
      return `${ack.root}|RETURN_START|${ack.token}`;
  }
}

function recordKey(r: JournalRecord): string | null {
  const e = r.event;
  switch (e.type) {
    case 'READING':
      return `${r.root}|READING|${(e['reading'] as { observed_at: string }).observed_at}`;
    case 'LEASE_ACQUIRE':
      return `${r.root}|LEASE_ACQUIRE|${r.context.lease.holder?.executor}|${r.context.lease.holder?.token}`;
    case 'LEASE_RENEW':
    case 'LEASE_RELEASE':
    case 'RETURN_START':
      return `${r.root}|${e.type}|${String(e['token'])}`;
    case 'LEASE_BREAK':
    case 'NOW':
      return `${r.root}|${e.type}|${String(e['reason'])}`;
    case 'HANDOFF_ACCEPTED':
    case 'RETURN_ACCEPTED':
      return `${r.root}|${e.type}|${r.context.lease.holder?.token}`;
    default:
      return null;
  }
}

function checkAcks(records: JournalRecord[]): void {
  const written = new Set(records.map(recordKey));
  for (const ack of acks) expect(written.has(ackKey(ack)), `acknowledged ${JSON.stringify(ack)} is in the journal`).toBe(true);
}

function lastRecords(records: JournalRecord[]): Map<string, JournalRecord> {
  const last = new Map<string, JournalRecord>();
  for (const r of records) last.set(r.root, r);
  return last;
}

/** Tokens only grow along each workspace's journal; a new holder's token is above every earlier one. */
function checkTokens(records: JournalRecord[]): void {
  const highest = new Map<string, number>();
  const holder = new Map<string, number | null>();
  for (const r of records) {
    const { lease } = r.context;
    const top = highest.get(r.root) ?? 0;
    expect(lease.last_token, `${r.root}: last_token went down`).toBeGreaterThanOrEqual(top);
    if (lease.holder !== null && lease.holder.token !== holder.get(r.root)) expect(lease.holder.token).toBeGreaterThan(top);
    highest.set(r.root, Math.max(top, lease.last_token));
    holder.set(r.root, lease.holder?.token ?? null);
  }
}

async function waitForDrains(d: DaemonProcess, pairs: readonly Pair[]): Promise<void> {
  for (const pair of pairs) {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const s = await status(d, pair.a);
      const draining = s.state === 'EVACUATE' || (s.state === 'TAKEOVER' && s.cycle?.return_drain != null);
      if (!draining) break;
      // Nothing in this harness blocks a drain but the kill itself: a blocked reason is a finding.
      expect(s.blocked, `${pair.a}: the interrupted drain is blocked`).toBeNull();
      expect(Date.now() < deadline, `${pair.a}: the interrupted drain did not finish within 60 s`).toBe(true);
      await sleep(50);
    }
    bump(figures, 'drains_checked');
  }
}

async function verifyRecovery(d: DaemonProcess, stateDir: string, pairs: readonly Pair[], roots: readonly string[], waitDrains: boolean): Promise<void> {
  const journalPath = join(stateDir, 'journal.jsonl');
  const journal = readJournal(journalPath);
  expect(journal.corruptLine, 'the journal has no damaged record').toBeNull();
  expect(journal.tornBytes, 'the torn tail was cut at start').toBe(0);
  const records = journal.records as JournalRecord[];
  checkAcks(records);
  checkTokens(records);
  // The state served is the state journaled, lease included.
  const last = lastRecords(records);
  const served = new Map<string, Status>();
  for (const root of roots) if (last.has(root)) served.set(root, await status(d, root));
  // A resumed drain may have moved on since: the state served is the last journaled one or a later one.
  const later = (readJournal(journalPath).records as JournalRecord[]).slice(records.length);
  for (const [root, s] of served) {
    const since = [last.get(root) as JournalRecord, ...later.filter((r) => r.root === root)];
    expect(
      since.map((r) => r.state),
      `${root} serves a journaled state after restart`,
    ).toContain(s.state);
    const match = since.find((r) => r.state === s.state && r.context.lease.last_token === s.lease.last_token);
    expect(match, `${root}: the lease served after restart is a journaled one (${JSON.stringify(s.lease)})`).toBeDefined();
  }
  if (waitDrains) await waitForDrains(d, pairs);
  for (const pair of pairs) {
    const { manifests, problems } = readAllManifests(pair.a);
    expect(problems, `${pair.a}: manifests`).toEqual([]);
    bump(figures, 'manifests_checked', manifests.length);
    const s = await status(d, pair.a);
    const known = new Set(manifests.map((m) => m.sha256));
    for (const sha of [...(s.cycle?.drain.manifests ?? []), ...(s.cycle?.return_drain?.manifests ?? [])])
      expect(known.has(sha), `a journaled manifest sha ${sha} is on disk`).toBe(true);
    if (s.state === 'HANDOFF_READY' && s.cycle !== null) {
      // Recoverable for real: the remote has the checkpoint under the handoff branch.
      const commit = s.cycle.checkpoint?.commit ?? '';
      expect(git(pair.remote, 'rev-parse', `refs/heads/handoff/${s.cycle.id}`)).toBe(commit);
    }
  }
}

// ------------------------------------------------------------------------------------------------

afterAll(() => {
  figures.extra['seed'] = SEED;
  saveFigures('kill9', figures, transitions, (Date.now() - started) / 1000);
});

describe('kill -9 at random moments', () => {
  it(
    `${KILLS} kills during signals, lease changes, evacuations, accepts and returns; every restart recovers all acknowledged writes (seed ${SEED})`,
    { timeout: 3_600_000 },
    async () => {
      const stateDir = tempDir('kill9');
      const { chmodSync } = await import('node:fs');
      chmodSync(stateDir, 0o700);
      // Acknowledged writes are checked as events in the journal: no compaction may fold them away here
      // (compaction's own crash safety is tested in test/unit/store/journal.test.ts and bounded-state.test.ts).
      writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ git_timeout_seconds: 20, journal: { compact_after_bytes: 1_073_741_824 } }));
      const pairs: Pair[] = [twoClones(), twoClones()];
      const churn = tempRepo();
      const roots = [...pairs.flatMap((p) => [p.a, p.b]), churn];
      let pending = false;
      while (figures.kills < KILLS) {
        const killStep: DrainStep | null = rng.chance(0.25) ? rng.pick(DRAIN_STEPS) : null;
        const journalPath = join(stateDir, 'journal.jsonl');
        const torn = readJournal(journalPath).tornBytes > 0;
        const logPath = join(stateDir, 'daemon.log');
        const logBefore = existsSync(logPath) ? readFileSync(logPath).length : 0;
        const t0 = Date.now();
        let d: DaemonProcess;
        try {
          d = await startDaemon(stateDir, killStep === null ? {} : { HANDOFF_TEST_KILL_AFTER_STEP: killStep });
        } catch (error) {
          // A drain the crash left resumes at start and can reach the kill step before daemon.json is
          // written: one more kill, checked by the next start. Anything else is a failure.
          if (!(error instanceof DaemonDiedAtStart && error.signal === 'SIGKILL' && killStep !== null)) throw error;
          figures.kills += 1;
          bump(figures, 'kills_after_a_step');
          bump(figures, 'kills_during_start');
          continue;
        }
        bump(figures, 'start_ms', Date.now() - t0);
        figures.runs += 1;
        try {
          if (torn) {
            // Cut and reported: this life's log says so.
            bump(figures, 'torn_tails_cut');
            expect(readFileSync(logPath).subarray(logBefore).toString('utf8')).toMatch(/torn last record/);
          }
          const t1 = Date.now();
          if (pending) await verifyRecovery(d, stateDir, pairs, roots, killStep === null);
          bump(figures, 'verify_ms', Date.now() - t1);
          pending = true;
          const pair = rng.pick(pairs);
          const delay = rng.pick([rng.int(0, 60), rng.int(20, 400), rng.int(100, 1500)]);
          const timer = setTimeout(() => d.child.kill('SIGKILL'), delay);
          const load = [flow(d, pair), signals(d, [pair.a, churn]), leaseChurn(d, churn)];
          const settled = await Promise.allSettled(load);
          clearTimeout(timer);
          for (const result of settled) if (result.status === 'rejected' && !(result.reason instanceof DaemonGone)) throw result.reason;
        } catch (error) {
          // A daemon that died from its kill step during the checks is one more kill; anything else is a failure.
          if (!(error instanceof DaemonGone)) {
            d.child.kill('SIGKILL');
            throw new Error(`${(error as Error).message}\n(seed ${SEED}; daemon stderr: ${d.stderr().slice(-2000)})`, { cause: error });
          }
        }
        if (alive(d)) d.child.kill('SIGKILL');
        await exited(d.child);
        expect(d.child.signalCode, `the daemon died of something else: ${d.stderr().slice(-1000)}`).toBe('SIGKILL');
        figures.kills += 1;
        if (killStep !== null) bump(figures, 'kills_after_a_step');
      }
      // The last word: a daemon without a fault point recovers everything and finishes every drain.
      const final = await startDaemon(stateDir);
      try {
        await verifyRecovery(final, stateDir, pairs, roots, true);
      } finally {
        await final.stop();
      }
      bump(figures, 'acknowledged_writes', acks.length);
      transitions.addJournal(join(stateDir, 'journal.jsonl'));
      expect(existsSync(join(stateDir, 'journal.jsonl'))).toBe(true);
      expect(
        createHash('sha256')
          .update(readFileSync(join(stateDir, 'journal.jsonl')))
          .digest('hex'),
      ).toMatch(/^[0-9a-f]{64}$/);
    },
  );
});
