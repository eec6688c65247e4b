import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchRecordsRef } from '../../daemon/git/index.js';
import { api, startDaemon, type DaemonProcess, type RawResponse } from '../support/daemon.js';
import { git, tempDir, tempRepo } from '../support/git.js';
import { twoClones } from '../support/scenario.js';
import { newFigures, saveFigures, TransitionLog } from './support/figures.js';
import { readJournal } from './support/journal-read.js';
import { Rng, seedFrom } from './support/rng.js';

/*
 * Races over real loopback HTTP: N clients, each on its own connection, fire at the same moment for
 * the lease (through different spellings of the same repository) and for `accept` of one ready cycle
 * (from several clones, twice from the same clone, with and without --checkout, by id and --latest).
 * Every round has exactly one winner, and the journal agrees.
 */

const SOAK = process.env['SOAK'] === '1';
const LEASE_ROUNDS = Number(process.env['LEASE_ROUNDS'] ?? (SOAK ? 500 : 60));
const MACHINE_ROUNDS = Number(process.env['MACHINE_ROUNDS'] ?? (SOAK ? 20 : 4));
const ACCEPT_ROUNDS = Number(process.env['ACCEPT_ROUNDS'] ?? (SOAK ? 60 : 4));
const CLIENTS = 16;
const SEED = seedFrom('RACE_SEED');
const rng = new Rng(SEED);
const figures = newFigures();
const transitions = new TransitionLog();
const started = Date.now();
let daemon: DaemonProcess;
const others: DaemonProcess[] = [];

async function call(method: 'GET' | 'POST', path: string, body?: unknown, d: DaemonProcess = daemon): Promise<RawResponse> {
  figures.requests += 1;
  const response = await api(d, method, path, body);
  expect(response.status, response.text.slice(0, 300)).toBeLessThan(500);
  return response;
}

const codes = (responses: RawResponse[]) => responses.map((r) => r.body.code).sort();
const count = (responses: RawResponse[], code: string) => responses.filter((r) => r.body.code === code).length;

async function stateOf(
  repo: string,
  d: DaemonProcess = daemon,
): Promise<{
  state: string;
  blocked: string | null;
  cycle: { id: string } | null;
  lease: { holder: { executor: string; token: number } | null; last_token: number };
}> {
  return (await call('GET', `/v1/status?repo=${encodeURIComponent(repo)}`, undefined, d)).body.data as never;
}

async function until(repo: string, wanted: string, d: DaemonProcess = daemon): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const s = await stateOf(repo, d);
    if (s.state === wanted) return s.cycle?.id ?? '';
    expect(s.blocked, `${repo} blocked on the way to ${wanted}`).toBeNull();
    expect(Date.now() < deadline, `${repo} never reached ${wanted} (is ${s.state})`).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 40));
  }
}

beforeAll(async () => {
  const stateDir = tempDir('race');
  const { chmodSync } = await import('node:fs');
  chmodSync(stateDir, 0o700);
  writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ git_timeout_seconds: 30 }));
  daemon = await startDaemon(stateDir);
});

afterAll(async () => {
  await daemon.stop();
  transitions.addJournal(join(daemon.stateDir, 'journal.jsonl'));
  for (const other of others) {
    await other.stop();
    transitions.addJournal(join(other.stateDir, 'journal.jsonl'));
  }
  figures.extra['seed'] = SEED;
  saveFigures('race', figures, transitions, (Date.now() - started) / 1000);
});

describe('races over loopback HTTP: exactly one winner every round', () => {
  it(`${LEASE_ROUNDS} rounds of ${CLIENTS} clients racing for the lease through different spellings of one repository`, { timeout: 600_000 }, async () => {
    const repo = tempRepo();
    mkdirSync(join(repo, 'sub', 'deeper'), { recursive: true });
    const link = join(tempDir('link'), 'repo-link');
    symlinkSync(repo, link);
    const spellings = [repo, `${repo}/`, join(repo, 'sub'), join(repo, 'sub', 'deeper'), `${repo}/sub/..`, link, join(link, 'sub')];
    let lastToken = 0;
    for (let round = 0; round < LEASE_ROUNDS; round += 1) {
      const racers = Array.from({ length: CLIENTS }, (_, i) => call('POST', '/v1/lease/acquire', { repo: rng.pick(spellings), as: `racer-${round}-${i}` }));
      const answers = await Promise.all(racers);
      expect(count(answers, 'lease_acquired'), `round ${round}: ${codes(answers).join(',')}`).toBe(1);
      expect(count(answers, 'lease_held')).toBe(CLIENTS - 1);
      const winner = answers.find((r) => r.body.code === 'lease_acquired');
      const token = Number((winner?.body.data as { token: number }).token);
      expect(token, 'a fresh token above every earlier one').toBe(lastToken + 1);
      lastToken = token;
      // Free it again by a race too: all clients release or renew with the tokens they know; only the holder's counts.
      const freers = Array.from({ length: CLIENTS }, (_, i) =>
        call('POST', i % 2 === 0 ? '/v1/lease/release' : '/v1/lease/renew', {
          repo: rng.pick(spellings),
          token: i < 2 ? token : Math.max(1, token - rng.int(1, 5)),
        }),
      );
      const freed = await Promise.all(freers);
      expect(count(freed, 'stale_token'), codes(freed).join(',')).toBe(CLIENTS - count(freed, 'lease_released') - count(freed, 'lease_renewed'));
      expect(count(freed, 'lease_released')).toBeLessThanOrEqual(1);
      if (count(freed, 'lease_released') === 0)
        expect((await call('POST', '/v1/lease/break', { repo, reason: `round ${round}` })).body.code).toBe('lease_broken');
      const lease = (await stateOf(repo)).lease;
      expect(lease).toMatchObject({ holder: null, last_token: token });
      figures.runs += 1;
    }
    // The journal has one acquire per round, never two holders at once.
    const records = readJournal(join(daemon.stateDir, 'journal.jsonl')).records as {
      root: string;
      event: { type: string };
      context: { lease: { holder: unknown } };
    }[];
    const mine = records.filter((r) => r.root === repo);
    expect(mine.filter((r) => r.event.type === 'LEASE_ACQUIRE')).toHaveLength(LEASE_ROUNDS);
    let held = false;
    for (const r of mine) {
      if (r.event.type === 'LEASE_ACQUIRE') expect(held, 'acquired while held').toBe(false);
      held = r.context.lease.holder !== null;
    }
  });

  it(`${ACCEPT_ROUNDS} rounds of accepts racing for one ready cycle, then for its return`, { timeout: 900_000 }, async () => {
    const { a, remote } = twoClones();
    const clones = Array.from({ length: 4 }, (_, i) => {
      const dir = join(tempDir(`clone${i}`), 'c');
      git(a, 'clone', '-q', remote, dir);
      return dir;
    });
    for (let round = 0; round < ACCEPT_ROUNDS; round += 1) {
      // Even rounds: the source is clean, so every clone verifies as it is. Odd rounds: the source
      // changed, so only --checkout (on a clean clone) can verify.
      const dirty = round % 2 === 1;
      if (dirty) writeFileSync(join(a, 'f.txt'), `round ${round}\n`);
      expect((await call('POST', '/v1/now', { repo: a, wait: false })).body.code).toBe('evacuation_started');
      const cycle = await until(a, 'HANDOFF_READY');
      const before = (await stateOf(a)).lease.last_token;
      const racers: Promise<RawResponse>[] = [];
      clones.forEach((clone, i) => {
        for (const twin of [0, 1]) {
          const how = rng.chance(0.3) ? { latest: true } : { cycle };
          racers.push(call('POST', '/v1/accept', { repo: clone, as: `receiver-${i}-${twin}`, checkout: dirty || rng.chance(0.5), ...how }));
        }
      });
      racers.push(call('POST', '/v1/lease/acquire', { repo: a, as: 'sneaky' }), call('POST', '/v1/lease/acquire', { repo: a, as: 'sneakier' }));
      const answers = await Promise.all(racers);
      expect(count(answers, 'accepted'), `round ${round}: ${codes(answers).join(',')}`).toBe(1);
      expect(count(answers, 'lease_acquired'), 'the lease on offer is taken only through accept').toBe(0);
      // A lease on offer through the remote is not acquired here either: it travels (lease_travels).
      for (const answer of answers)
        expect(['accepted', 'lease_held', 'wrong_state', 'diverged', 'lease_travels'], answer.text.slice(0, 300)).toContain(answer.body.code);
      const winner = answers.find((r) => r.body.code === 'accepted');
      const token = Number((winner?.body.data as { token: number }).token);
      expect(token).toBe(before + 1);
      const s = await stateOf(a);
      expect(s).toMatchObject({ state: 'TAKEOVER', lease: { holder: { token } } });
      const winnerRepo = clones[Math.floor(answers.indexOf(winner as RawResponse) / 2)] ?? '';

      // The holder's return, started by several of its clients at once: one starts it.
      const returns = await Promise.all(Array.from({ length: 4 }, () => call('POST', '/v1/return', { repo: winnerRepo, wait: false, token })));
      expect(
        returns.filter((r) => (r.body.data as { changed?: boolean } | null)?.changed === true),
        codes(returns).join(','),
      ).toHaveLength(1);
      await until(a, 'RETURN_HANDOFF_READY');
      const back = await Promise.all(
        Array.from({ length: 6 }, (_, i) => call('POST', '/v1/accept', { repo: a, cycle, return: true, as: `primary-${i}`, checkout: true })),
      );
      expect(count(back, 'accepted'), codes(back).join(',')).toBe(1);
      expect((await stateOf(a)).state).toBe('CLOSED');
      figures.runs += 1;
      const records = readJournal(join(daemon.stateDir, 'journal.jsonl')).records as {
        root: string;
        event: { type: string };
        context: { cycle: { id: string } | null };
      }[];
      const ofCycle = records.filter((r) => r.root === a && r.context.cycle?.id === cycle);
      expect(ofCycle.filter((r) => r.event.type === 'HANDOFF_ACCEPTED')).toHaveLength(1);
      expect(ofCycle.filter((r) => r.event.type === 'RETURN_START')).toHaveLength(1);
      expect(ofCycle.filter((r) => r.event.type === 'RETURN_ACCEPTED')).toHaveLength(1);
    }
  });

  it(`${MACHINE_ROUNDS} rounds of daemons on three "machines" racing to accept one cycle through the git remote`, { timeout: 900_000 }, async () => {
    // Three state dirs are three machines; they share nothing but the bare remote.
    const machines = [daemon];
    for (let i = 0; i < 2; i += 1) {
      const stateDir = tempDir(`machine${i}`);
      const { chmodSync } = await import('node:fs');
      chmodSync(stateDir, 0o700);
      writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ git_timeout_seconds: 30 }));
      const other = await startDaemon(stateDir);
      others.push(other);
      machines.push(other);
    }
    const { a, remote } = twoClones();
    const clone = (name: string) => {
      const dir = join(tempDir(name), 'c');
      git(a, 'clone', '-q', remote, dir);
      return dir;
    };
    // Per machine, the checkout that races from it: the source machine races locally too.
    const racers = [
      { d: machines[0] as DaemonProcess, repo: clone('local'), from: undefined },
      ...machines.slice(1).map((d, i) => ({ d, repo: clone(`remote${i}`), from: 'origin' })),
    ];
    let lastToken = 0;
    for (let round = 0; round < MACHINE_ROUNDS; round += 1) {
      writeFileSync(join(a, 'f.txt'), `machine round ${round}\n`);
      // A receiver in PREPARE (or CLOSED from an earlier round) takes the cycle over from there too.
      if (round === 1) for (const r of racers.slice(1)) await call('POST', '/v1/prepare', { repo: r.repo }, r.d);
      expect((await call('POST', '/v1/now', { repo: a, wait: false })).body.code).toBe('evacuation_started');
      const cycle = await until(a, 'HANDOFF_READY');
      // The source machine's own checkout races in the last round only: it is the quickest and would always win.
      // In the third round only receivers whose workspace is CLOSED (an earlier winner's) race, so a
      // takeover from CLOSED happens too.
      const remoteRacers = racers.slice(1);
      const closed = [];
      for (const r of remoteRacers) if ((await stateOf(r.repo, r.d)).state === 'CLOSED') closed.push(r);
      const racing = round === MACHINE_ROUNDS - 1 ? racers : round === 2 && closed.length > 0 ? closed : remoteRacers;
      const answers = await Promise.all(
        racing.map((r) =>
          call(
            'POST',
            '/v1/accept',
            { repo: r.repo, cycle, as: `machine-${racers.indexOf(r)}`, checkout: true, ...(r.from === undefined ? {} : { from: r.from }) },
            r.d,
          ),
        ),
      );
      expect(count(answers, 'accepted'), `round ${round}: ${codes(answers).join(',')} ${answers.map((x) => x.body.error?.message ?? '').join(' | ')}`).toBe(1);
      for (const answer of answers) expect(['accepted', 'lease_held'], answer.text.slice(0, 300)).toContain(answer.body.code);
      const winner = racing[answers.findIndex((x) => x.body.code === 'accepted')] as (typeof racers)[number];
      const index = racers.indexOf(winner);
      const token = Number((answers.find((x) => x.body.code === 'accepted')?.body.data as { token: number }).token);
      expect(token, 'the winner holds a token above every earlier one').toBeGreaterThan(lastToken);
      lastToken = token;
      // The source follows the remote: the lease is the winner's, on every machine that looks.
      await until(a, 'TAKEOVER');
      expect((await stateOf(a)).lease.holder).toMatchObject({ executor: `machine-${index}`, token });
      expect((await call('POST', '/v1/return', { repo: winner.repo, wait: false, token }, winner.d)).body.code).toBe('return_started');
      await until(a, 'RETURN_HANDOFF_READY');
      expect((await call('POST', '/v1/accept', { repo: a, cycle, return: true, as: 'primary', checkout: true })).body.code).toBe('accepted');
      lastToken = (await stateOf(a)).lease.last_token;
      if (winner.d !== daemon) await until(winner.repo, 'CLOSED', winner.d);
      figures.runs += 1;
    }
  });

  it('records fetches racing in one checkout all succeed: losing the ref lock is no remote failure', { timeout: 300_000 }, async () => {
    const { a, b } = twoClones();
    const ref = 'refs/handoff/lease/20260101T000000Z-racers';
    for (let round = 0; round < 10; round += 1) {
      // A new head on the remote each round, so every fetch has to move the same local ref.
      const tree = git(a, 'write-tree');
      const commit = git(a, 'commit-tree', tree, '-m', `lease ${round}`);
      git(a, 'push', '-q', '--force', 'origin', `${commit}:${ref}`);
      const fetched = await Promise.all(Array.from({ length: 12 }, () => fetchRecordsRef(b, 'origin', ref, 30_000)));
      expect(
        fetched.filter((f) => !f.ok),
        JSON.stringify(fetched.find((f) => !f.ok)),
      ).toEqual([]);
      expect(git(b, 'rev-parse', ref)).toBe(commit);
      figures.runs += 1;
    }
  });
});
