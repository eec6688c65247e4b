import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, cli, exited, startDaemon, type DaemonProcess, type RawResponse } from '../support/daemon.js';
import { git, tempDir, tempRepo } from '../support/git.js';
import { twoClones } from '../support/scenario.js';
import { newFigures, saveFigures, TransitionLog } from './support/figures.js';
import { readJournal } from './support/journal-read.js';
import { readAllManifests } from './support/manifests.js';

/*
 * File-system hostility: a symlink where the daemon writes a package or reads the capsule, a
 * `.session-handoff` that is a file, a read-only location, a full disk (a tiny tmpfs, when this
 * machine lets us mount one). Each must end in a clear error — a message that names the path or the
 * cause, never "the daemon failed" — with nothing half-written and nothing outside the repository
 * touched; once the cause is gone, the work goes on.
 */

const figures = newFigures();
const transitions = new TransitionLog();
const started = Date.now();
const journals: string[] = [];
let daemon: DaemonProcess;
let mountable: string | null = null;
const mounts: string[] = [];

const GENERIC = /the daemon failed to handle this request/;

async function call(method: 'GET' | 'POST', path: string, body?: unknown, d: DaemonProcess = daemon): Promise<RawResponse> {
  figures.requests += 1;
  return api(d, method, path, body);
}

const status = async (repo: string, d: DaemonProcess = daemon) =>
  (await call('GET', `/v1/status?repo=${encodeURIComponent(repo)}`, undefined, d)).body.data as {
    state: string;
    blocked: string | null;
    paused: unknown;
    cycle: { id: string } | null;
    lease: { holder: { executor: string } | null };
  };

/** A refusal a person can act on: an Envelope, a 4xx/5xx, and a message naming the cause. */
function expectClear(response: RawResponse, cause: RegExp, what: string): void {
  expect(response.status, `${what}: ${response.text.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
  expect(response.body.authority).toBe('none');
  expect(response.body.error?.message, what).not.toMatch(GENERIC);
  expect(response.body.error?.message, what).toMatch(cause);
  expect(response.body.error?.hint, what).toBeTruthy();
  figures.runs += 1;
}

/** Temp files a crash or a failed write would leave (`.name.tmp.<pid>.<hex>`): there must be none. */
function leftovers(dir: string): string[] {
  if (!existsSync(dir) || !lstatSync(dir).isDirectory()) return [];
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (/\.tmp\.\d+\.[0-9a-f]+$/.test(name)) found.push(path);
    if (lstatSync(path).isDirectory()) found.push(...leftovers(path));
  }
  return found;
}

function mount(dir: string, options: string): void {
  execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { stdio: 'pipe' });
  mounts.push(dir);
}

function remount(dir: string, options: string): void {
  execFileSync('mount', ['-o', `remount,${options}`, dir], { stdio: 'pipe' });
}

/** Stops the drain after publish, before the package exists: the place where the package will go is then known. */
async function cycleStoppedBeforePackage(stateDir: string, repo: string): Promise<string> {
  const doomed = await startDaemon(stateDir, { HANDOFF_TEST_KILL_AFTER_STEP: 'snapshot' });
  await cli(stateDir, ['now', '--no-wait', '--json'], repo);
  await exited(doomed.child);
  const records = readJournal(join(stateDir, 'journal.jsonl')).records as { root: string; context: { cycle: { id: string } | null } }[];
  const cycle = records.filter((r) => r.root === repo).at(-1)?.context.cycle?.id;
  expect(cycle).toBeTruthy();
  return cycle ?? '';
}

async function untilSettled(repo: string, d: DaemonProcess = daemon): Promise<{ state: string; blocked: string | null }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const s = await status(repo, d);
    if (s.state !== 'EVACUATE' || s.blocked !== null) return s;
    expect(Date.now() < deadline, 'the drain neither finished nor blocked').toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  daemon = await startDaemon();
  journals.push(join(daemon.stateDir, 'journal.jsonl'));
  const probe = tempDir('mount-probe');
  try {
    mount(probe, 'size=64k');
    mountable = null;
  } catch (error) {
    mountable = `tmpfs cannot be mounted here (${String((error as Error).message).split('\n')[0]})`;
  }
});

afterAll(async () => {
  await daemon.stop();
  for (const dir of mounts.reverse()) {
    try {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
    } catch {
      // Already gone with its parent.
    }
  }
  for (const journal of journals) transitions.addJournal(journal);
  if (mountable !== null) figures.extra['skipped_needing_tmpfs'] = 3;
  saveFigures('fs-hostility', figures, transitions, (Date.now() - started) / 1000);
});

describe('symlinks planted where the daemon writes', () => {
  it('at the package files: the drain blocks naming the file, the link targets are untouched, no half-written package; removed, the drain finishes', async () => {
    const stateDir = tempDir('state');
    chmodSync(stateDir, 0o700);
    journals.push(join(stateDir, 'journal.jsonl'));
    const { a } = twoClones();
    writeFileSync(join(a, 'f.txt'), 'work in progress\n');
    const cycle = await cycleStoppedBeforePackage(stateDir, a);
    const outside = tempDir('victim');
    const victims = { 'manifest.json': join(outside, 'manifest-victim'), 'HANDOFF.md': join(outside, 'handoff-victim') };
    const dir = join(a, '.session-handoff', cycle);
    mkdirSync(dir, { recursive: true });
    for (const [name, victim] of Object.entries(victims)) {
      writeFileSync(victim, `precious ${name}\n`);
      symlinkSync(victim, join(dir, name));
    }
    const d = await startDaemon(stateDir);
    try {
      const s = await untilSettled(a, d);
      expect(s.state).toBe('EVACUATE');
      expect(s.blocked).toMatch(/HANDOFF\.md|manifest\.json/);
      expect(s.blocked).toMatch(/already exists/);
      figures.runs += 1;
      for (const [name, victim] of Object.entries(victims)) expect(readFileSync(victim, 'utf8')).toBe(`precious ${name}\n`);
      expect(readdirSync(dir).sort()).toEqual(['HANDOFF.md', 'manifest.json']);
      expect(leftovers(dir)).toEqual([]);
      expect((await cli(stateDir, ['check', '--json'], a)).code).toBe(1);
      for (const name of Object.keys(victims)) rmSync(join(dir, name));
      expect((await cli(stateDir, ['resume', '--json'], a)).json.code).toBe('handoff_ready');
      expect(readAllManifests(a).problems).toEqual([]);
    } finally {
      await d.stop();
    }
  });

  it('at the cycle directory: nothing is written through it, the drain blocks naming it', async () => {
    const stateDir = tempDir('state');
    chmodSync(stateDir, 0o700);
    journals.push(join(stateDir, 'journal.jsonl'));
    const { a } = twoClones();
    writeFileSync(join(a, 'f.txt'), 'work in progress\n');
    const cycle = await cycleStoppedBeforePackage(stateDir, a);
    const outside = tempDir('elsewhere');
    symlinkSync(outside, join(a, '.session-handoff', cycle));
    const d = await startDaemon(stateDir);
    try {
      const s = await untilSettled(a, d);
      expect(readdirSync(outside), 'written through a symlinked cycle directory').toEqual([]);
      expect(s.state).toBe('EVACUATE');
      expect(s.blocked).toMatch(new RegExp(`${cycle}.*symbolic link|symbolic link.*${cycle}`));
      figures.runs += 1;
      rmSync(join(a, '.session-handoff', cycle));
      expect((await cli(stateDir, ['resume', '--json'], a)).json.code).toBe('handoff_ready');
      expect(readAllManifests(a).problems).toEqual([]);
    } finally {
      await d.stop();
    }
  });

  it('at capsule.json: its target is neither read into status nor written; a capsule set replaces the link', async () => {
    const repo = tempRepo();
    await status(repo);
    const secret = join(tempDir('secret'), 'credentials');
    writeFileSync(secret, 'SECRET_TOKEN=do-not-quote-me\n');
    const link = join(repo, '.session-handoff', 'capsule.json');
    symlinkSync(secret, link);
    const shown = await call('GET', `/v1/capsule?repo=${encodeURIComponent(repo)}`);
    expect(shown.body.data).toMatchObject({ capsule: null, error: expect.stringMatching(/symbolic link/) });
    expect(shown.text).not.toMatch(/SECRET/);
    const set = await call('POST', '/v1/capsule', { repo, capsule: { objective: 'ship it', next_action: 'run `npm test`' } });
    expect(set.body.code).toBe('capsule_saved');
    expect(readFileSync(secret, 'utf8')).toBe('SECRET_TOKEN=do-not-quote-me\n');
    expect(lstatSync(link).isSymbolicLink()).toBe(false);
    expect(JSON.parse(readFileSync(link, 'utf8'))).toMatchObject({ objective: 'ship it' });
    expect(leftovers(join(repo, '.session-handoff'))).toEqual([]);
    figures.runs += 1;
  });
});

describe('.session-handoff is a file', () => {
  it('status still answers; capsule, pause and the drain refuse clearly; the file is untouched', async () => {
    const repo = tempRepo();
    const path = join(repo, '.session-handoff');
    writeFileSync(path, 'a file of the user\n');
    expect((await call('GET', `/v1/status?repo=${encodeURIComponent(repo)}`)).status).toBe(200);
    expectClear(await call('POST', '/v1/capsule', { repo, capsule: { objective: 'x', next_action: 'run `npm test`' } }), /\.session-handoff/, 'capsule set');
    expectClear(await call('POST', '/v1/pause', { scope: 'workspace', repo }), /\.session-handoff/, 'pause');
    expect((await status(repo)).paused).toBeNull();
    writeFileSync(join(repo, 'README.md'), 'changed\n');
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], repo);
    expect(now.json.code).toBe('drain_blocked');
    expect(now.json.error?.message).toMatch(/ENOTDIR|not a directory/);
    figures.runs += 1;
    expect(readFileSync(path, 'utf8')).toBe('a file of the user\n');
  });

  it('in the receiver: the accept is refused before the lease moves', async () => {
    const { a, b } = twoClones();
    // Excluded, so the receiver's work tree still equals the checkpoint and only the file is in the way.
    appendFileSync(join(b, '.git', 'info', 'exclude'), '/.session-handoff\n');
    writeFileSync(join(b, '.session-handoff'), 'a file of the user\n');
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], a);
    const cycle = (now.json.data?.['cycle'] as { id: string }).id;
    const accepted = await call('POST', '/v1/accept', { repo: b, cycle, as: 'receiver' });
    expectClear(accepted, /\.session-handoff/, 'accept');
    const s = await status(a);
    expect(s.state).toBe('HANDOFF_READY');
    expect(s.lease.holder).toBeNull();
    expect(readFileSync(join(b, '.session-handoff'), 'utf8')).toBe('a file of the user\n');
  });
});

describe('read-only and full file systems (tmpfs)', () => {
  const skip = () => {
    if (mountable === null) return false;
    process.stdout.write(`fs-hostility: skipped: ${mountable}\n`);
    return true;
  };

  it('a repository whose file system turns read-only: capsule, pause and the drain refuse clearly; writable again, the drain finishes', async () => {
    if (skip()) return;
    const mnt = tempDir('ro');
    mount(mnt, 'size=16m');
    const repo = join(mnt, 'repo');
    mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    writeFileSync(join(repo, 'a.txt'), 'one\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'one');
    writeFileSync(join(repo, 'a.txt'), 'two\n');
    await status(repo);
    remount(mnt, 'ro');
    try {
      expectClear(
        await call('POST', '/v1/capsule', { repo, capsule: { objective: 'x', next_action: 'run `npm test`' } }),
        /read-only|EROFS/,
        'capsule set on a read-only fs',
      );
      expectClear(await call('POST', '/v1/pause', { scope: 'workspace', repo }), /read-only|EROFS/, 'pause on a read-only fs');
      const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], repo);
      expect(now.json.code).toBe('drain_blocked');
      // git's own words name the step and the file, though not "read-only" (see the report).
      expect(now.json.error?.message).toMatch(/read-only|EROFS|snapshot failed: .*unable to|insufficient permission/i);
      figures.runs += 1;
    } finally {
      remount(mnt, 'rw');
    }
    expect(leftovers(join(repo, '.session-handoff'))).toEqual([]);
    expect((await cli(daemon.stateDir, ['resume', '--json'], repo)).json.code).toBe('handoff_ready');
    expect(readAllManifests(repo).problems).toEqual([]);
  });

  it('a full disk under the repository: the package is not half-written; with space again, the drain finishes', async () => {
    if (skip()) return;
    const mnt = tempDir('full');
    mount(mnt, 'size=1m');
    const repo = join(mnt, 'repo');
    mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    writeFileSync(join(repo, 'a.txt'), 'one\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'one');
    writeFileSync(join(repo, 'a.txt'), 'two\n');
    await status(repo);
    // Fill the disk to the last block.
    appendFileSync(join(mnt, 'filler'), Buffer.alloc(0));
    for (let size = 512 * 1024; size >= 512; size = Math.floor(size / 2)) {
      try {
        for (;;) appendFileSync(join(mnt, 'filler'), Buffer.alloc(size));
      } catch {
        // Full at this granularity: try smaller pieces.
      }
    }
    expectClear(
      await call('POST', '/v1/capsule', { repo, capsule: { objective: 'x'.repeat(2000), next_action: 'run `npm test`' } }),
      /disk is full|ENOSPC/,
      'capsule set on a full disk',
    );
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], repo);
    expect(now.json.code).toBe('drain_blocked');
    expect(now.json.error?.message).toMatch(/ENOSPC|no space|full/i);
    figures.runs += 1;
    expect(leftovers(join(repo, '.session-handoff'))).toEqual([]);
    expect(readAllManifests(repo).problems).toEqual([]);
    rmSync(join(mnt, 'filler'));
    expect((await cli(daemon.stateDir, ['resume', '--json'], repo)).json.code).toBe('handoff_ready');
    expect(readAllManifests(repo).problems).toEqual([]);
  });

  it('a full disk under the state dir: the write is refused clearly, the journal keeps whole records, a restart with space recovers every acknowledged write', async () => {
    if (skip()) return;
    const mnt = tempDir('fullstate');
    mount(mnt, 'size=256k');
    const stateDir = join(mnt, 'state');
    mkdirSync(stateDir, { mode: 0o700 });
    const d = await startDaemon(stateDir);
    const repo = tempRepo();
    const acked: string[] = [];
    try {
      writeFileSync(join(mnt, 'filler'), Buffer.alloc(0));
      for (let size = 64 * 1024; size >= 256; size = Math.floor(size / 2)) {
        try {
          for (;;) appendFileSync(join(mnt, 'filler'), Buffer.alloc(size));
        } catch {
          // Full at this granularity.
        }
      }
      let refused: RawResponse | null = null;
      // Lease breaks: changes that are journaled and fsync'd before the answer (a reading that moves
      // nothing is telemetry, written coalesced, and would not reach the full disk at once).
      for (let i = 0; i < 400 && refused === null; i += 1) {
        const reason = `fill the disk ${i} ${'x'.repeat(200)}`;
        const got = await call('POST', '/v1/lease/break', { repo, reason }, d);
        if (got.status === 200) acked.push(reason);
        else refused = got;
      }
      expect(refused, 'the state dir never filled up').not.toBeNull();
      if (refused !== null) expectClear(refused, /disk is full|ENOSPC/, 'a journal append on a full disk');
      const journal = readJournal(join(stateDir, 'journal.jsonl'));
      expect(journal.tornBytes, 'the failed append was cut back to whole records').toBe(0);
    } finally {
      await d.stop();
    }
    rmSync(join(mnt, 'filler'));
    const again = await startDaemon(stateDir);
    try {
      const records = readJournal(join(stateDir, 'journal.jsonl')).records as { event: { type: string; reason?: string } }[];
      const seen = new Set(records.map((r) => r.event.reason));
      for (const reason of acked) expect(seen.has(reason), `acknowledged lease break ${reason.slice(0, 20)}`).toBe(true);
      expect((await call('POST', '/v1/lease/break', { repo, reason: 'with space again' }, again)).status).toBe(200);
      figures.runs += 1;
    } finally {
      await again.stop();
    }
  });
});
