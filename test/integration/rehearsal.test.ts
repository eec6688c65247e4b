import { chmodSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, until, type DaemonProcess } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { hasLfs, pathWithoutLfs } from '../support/lfs.js';
import { busyRepo, hook, userState } from '../support/scenario.js';
import { plantedSecrets } from '../support/secrets.js';
import { slowHttpRemote } from '../support/slow-http-remote.js';

interface WayOut {
  state: 'proven' | 'blocked' | 'unknown';
  checked_at: string | null;
  cause: string | null;
  fix: string | null;
  remote: string | null;
  proven: string[];
}

const daemons: DaemonProcess[] = [];
afterAll(async () => {
  for (const daemon of daemons) await daemon.stop();
});

async function daemonWith(env: NodeJS.ProcessEnv = {}): Promise<DaemonProcess> {
  const daemon = await startDaemon(tempDir('state'), env);
  daemons.push(daemon);
  return daemon;
}

const remoteRefs = (bare: string) => git(bare, 'for-each-ref', '--format=%(refname) %(objectname)');
/**
 * Everything of the user's, the daemon's own namespaces included: a rehearsal writes no ref but its
 * local package's, under refs/session-handoff/rehearsal/ (never pushed, docs/refs.md).
 */
const everything = (root: string) => ({
  ...userState(root),
  allRefs: git(root, 'for-each-ref', '--format=%(refname) %(objectname)')
    .split('\n')
    .filter((line) => !line.startsWith('refs/session-handoff/rehearsal/')),
});

/** `handoff status` for people, its folded lines joined again (it folds to 80 columns in a pipe). */
const unfolded = (text: string) => text.replace(/\n {2,}/g, ' ');

/** `handoff prepare`, then the status once the rehearsal it starts has answered (`done`: and finished what it says). */
async function prepareAndRehearse(
  daemon: DaemonProcess,
  root: string,
  done: (wayOut: WayOut) => boolean = () => true,
): Promise<{ state: string; way_out: WayOut }> {
  const prepared = await cli(daemon.stateDir, ['prepare', '--json'], root);
  expect(prepared.json.code).toBe('prepare_entered');
  return until(
    'the rehearsal',
    async () => {
      const status = await cli(daemon.stateDir, ['status', '--json'], root);
      const data = status.json.data as { state: string; way_out: WayOut };
      return data.way_out.state === 'unknown' || !done(data.way_out) ? undefined : data;
    },
    60_000,
  );
}

const scannedAhead = (wayOut: WayOut) => wayOut.proven.some((line) => line.startsWith('secret scan done ahead'));

describe('PREPARE rehearses the way out, from the daemon environment, before any EVACUATE', () => {
  it('proves a bare remote: the drain refspecs and the server hooks, and leaves the remote and the user as they were', async () => {
    const { root, remote } = busyRepo();
    const daemon = await daemonWith();
    const before = everything(root);
    const remoteBefore = remoteRefs(remote);
    const status = await prepareAndRehearse(daemon, root, scannedAhead);
    expect(status.state).toBe('PREPARE');
    expect(status.way_out).toMatchObject({ state: 'proven', remote: 'origin', cause: null });
    expect(status.way_out.proven).toContain('server hooks take refs/handoff/');
    // src/app.ts, src/staged.ts and the untracked notes.md: what the drain would push.
    expect(unfolded((await cli(daemon.stateDir, ['status'], root)).stdout)).toMatch(
      /^way out: proven \d+ s ago \(origin, answers without a prompt, takes the handoff refs \(dry run\), server hooks take refs\/handoff\/, secret scan done ahead: 3 changed file\(s\), snapshot packaged locally\)$/m,
    );
    expect(remoteRefs(remote)).toBe(remoteBefore);
    expect(everything(root)).toEqual(before);
    // The local package: one commit on the daemon's local-only ref, whose parent is HEAD; not on the remote.
    const packaged = git(root, 'for-each-ref', '--format=%(refname)', 'refs/session-handoff/');
    expect(packaged).toMatch(/^refs\/session-handoff\/rehearsal\/[0-9a-f]{32}$/);
    expect(git(root, 'rev-parse', `${packaged}^`)).toBe(git(root, 'rev-parse', 'HEAD'));
    expect(remoteRefs(remote)).not.toContain('session-handoff');

    // The kill switch holds the rehearsal too: `handoff doctor` says so and pushes nothing.
    expect((await cli(daemon.stateDir, ['pause', '--json'], root)).json.code).toBe('paused');
    const doctor = await cli(daemon.stateDir, ['doctor', '--json'], root);
    expect(doctor.json.data).toMatchObject({
      way_out: null,
      way_out_line: expect.stringMatching(/^way out: not rehearsed — the workspace is paused/) as unknown,
    });
    expect(remoteRefs(remote)).toBe(remoteBefore);
  });

  it('EVACUATE after a rehearsal scans only what changed since, and a secret written after it is still withheld', async () => {
    const { root } = busyRepo();
    const daemon = await daemonWith();
    await prepareAndRehearse(daemon, root, scannedAhead);
    writeFileSync(join(root, 'notes.md'), 'untracked notes, edited after the rehearsal\n');
    writeFileSync(join(root, 'late.env'), plantedSecrets().env);
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code).toBe('handoff_ready');
    const cycle = now.json.data?.['cycle'] as { id: string; drain: { steps: { snapshot: { summary: Record<string, unknown> } } } };
    // src/app.ts and src/staged.ts were judged at PREPARE and are unchanged since (the package's index
    // says so): not even read again. notes.md and late.env are new bytes.
    expect(cycle.drain.steps.snapshot.summary).toMatchObject({ scanned: 2, scan_cached: 0, withheld: 1, rehearsal: 'reused', changed_since_rehearsal: 2 });
    expect(cycle.drain.steps.snapshot.summary['withheld_paths']).toMatch(/^late\.env /);
    expect(git(root, 'ls-tree', '-r', '--name-only', `refs/heads/handoff/${cycle.id}`)).not.toContain('late.env');
  });

  describe.skipIf(!hasLfs)('a repository using Git LFS', () => {
    function lfsRepo(): { root: string; remote: string } {
      const { root, remote } = busyRepo();
      git(root, 'lfs', 'install', '--local');
      git(root, 'lfs', 'track', '*.bin');
      writeFileSync(join(root, 'data.bin'), 'binary-ish content\n');
      git(root, 'add', '.gitattributes', 'data.bin');
      git(root, '-c', 'core.hooksPath=/dev/null', 'commit', '-q', '-m', 'lfs');
      git(root, 'push', '-q', '--no-verify', 'origin', 'main');
      return { root, remote };
    }

    it('says git-lfs runs for the daemon and its endpoint answers, uploading nothing', async () => {
      const { root, remote } = lfsRepo();
      const remoteBefore = remoteRefs(remote);
      const status = await prepareAndRehearse(await daemonWith(), root);
      expect(status.way_out.state).toBe('proven');
      expect(status.way_out.proven).toContain('git-lfs runs and its endpoint answers (a download probe, nothing uploaded)');
      expect(remoteRefs(remote)).toBe(remoteBefore);
      // The content of data.bin never went out (the test's push skipped git-lfs's pre-push hook): no LFS object on the remote.
      const objects = join(remote, 'lfs', 'objects');
      expect(existsSync(objects) ? readdirSync(objects, { recursive: true }).filter((name) => /^[0-9a-f]{64}$/.test(basename(String(name)))) : []).toEqual([]);
    });

    it('names an LFS endpoint that does not serve the LFS API (a plain smart HTTP server), with its fix', async () => {
      const { root, remote } = lfsRepo();
      const server = await slowHttpRemote(remote, 0);
      try {
        git(root, 'remote', 'set-url', 'origin', server.url);
        const remoteBefore = remoteRefs(remote);
        const status = await prepareAndRehearse(await daemonWith(), root);
        expect(status.way_out.state).toBe('blocked');
        expect(status.way_out.proven).toContain('takes the handoff refs (dry run)');
        expect(status.way_out.cause).toMatch(
          /^the repository uses Git LFS and origin's LFS endpoint \(http:\/\/127\.0\.0\.1:\d+\/remote\.git\/info\/lfs\) does not serve the Git LFS API/,
        );
        expect(status.way_out.fix).toMatch(/^enable Git LFS for the repository on the server/);
        expect(remoteRefs(remote)).toBe(remoteBefore);
      } finally {
        await server.close();
      }
    });

    it('is named BLOCKED when git-lfs is not on the daemon PATH', async () => {
      const { root } = lfsRepo();
      const status = await prepareAndRehearse(await daemonWith({ PATH: pathWithoutLfs() }), root);
      expect(status.way_out.state).toBe('blocked');
      expect(status.way_out.cause).toMatch(/^the repository uses Git LFS and git-lfs does not run in the daemon's environment/);
    });
  });

  it('names a pre-receive hook that refuses refs/handoff/*, with its words and the fix', async () => {
    const { root, remote } = busyRepo();
    // Its words carry a terminal escape too: the remote's words are data, shown escaped.
    hook(
      remote,
      'pre-receive',
      'while read old new ref; do case "$ref" in refs/handoff/*) printf "policy: no %s here\\033]0;owned\\007\\n" "$ref" >&2; exit 1;; esac; done',
    );
    const daemon = await daemonWith();
    const before = everything(root);
    const remoteBefore = remoteRefs(remote);
    const status = await prepareAndRehearse(daemon, root);
    expect(status.state).toBe('PREPARE');
    expect(status.way_out.state).toBe('blocked');
    expect(status.way_out.cause).toMatch(/origin's server policy refuses refs under refs\/handoff\/.*policy: no refs\/handoff\/rehearsal\//);
    expect(status.way_out.fix).toMatch(/allow pushes to refs\/heads\/handoff\/\* and refs\/handoff\/\*/);
    // Shown escaped (a git that masks sideband controls itself would show `^[` instead).
    expect(status.way_out.cause).toMatch(/(\\x1b|\^\[)\]0;owned/);
    expect([...(status.way_out.cause ?? '')].filter((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f)).toEqual([]);
    expect(unfolded((await cli(daemon.stateDir, ['status'], root)).stdout)).toMatch(
      /^way out: BLOCKED — origin's server policy refuses refs under refs\/handoff\/ .*; fix before 90 %/m,
    );
    expect(remoteRefs(remote)).toBe(remoteBefore);
    expect(everything(root)).toEqual(before);
  });

  it('names a smart HTTP remote that asks for credentials the daemon cannot give', async () => {
    const { root, remote } = busyRepo();
    const server = await slowHttpRemote(remote, 0, 'handoff:secret');
    try {
      git(root, 'remote', 'set-url', 'origin', server.url);
      const daemon = await daemonWith();
      const before = everything(root);
      const remoteBefore = remoteRefs(remote);
      const status = await prepareAndRehearse(daemon, root);
      expect(status.way_out.state).toBe('blocked');
      expect(status.way_out.cause).toMatch(/^origin asks for credentials in the daemon's environment and the daemon never prompts/);
      expect(status.way_out.fix).toMatch(/credential helper that needs no terminal/);
      expect(remoteRefs(remote)).toBe(remoteBefore);
      expect(everything(root)).toEqual(before);
    } finally {
      await server.close();
    }
  });

  describe('an SSH remote whose ssh needs an agent', () => {
    /** An `ssh` first on the daemon's PATH: without SSH_AUTH_SOCK it is refused as a real server would, with it, it runs the command locally. */
    function fakeSsh(): string {
      const bin = tempDir('bin');
      const ssh = join(bin, 'ssh');
      writeFileSync(
        ssh,
        '#!/bin/sh\n[ -n "$SSH_AUTH_SOCK" ] || { echo "git@fakehost: Permission denied (publickey)." >&2; exit 255; }\nfor arg; do cmd=$arg; done\nexec sh -c "$cmd"\n',
      );
      chmodSync(ssh, 0o755);
      return bin;
    }

    it('is named BLOCKED without an agent in the daemon environment, and proven with one', async () => {
      const { root, remote } = busyRepo();
      git(root, 'remote', 'set-url', 'origin', `ssh://fakehost${remote}`);
      const path = `${fakeSsh()}:${process.env['PATH'] ?? ''}`;
      const remoteBefore = remoteRefs(remote);

      const agentless = await daemonWith({ PATH: path, SSH_AUTH_SOCK: '' });
      const blocked = await prepareAndRehearse(agentless, root);
      expect(blocked.way_out.state).toBe('blocked');
      expect(blocked.way_out.cause).toMatch(/^origin asks for credentials in the daemon's environment: the daemon has no SSH agent/);

      const withAgent = await daemonWith({ PATH: path, SSH_AUTH_SOCK: join(tempDir('agent'), 'sock') });
      const proven = await prepareAndRehearse(withAgent, root);
      expect(proven.way_out).toMatchObject({ state: 'proven', remote: 'origin' });
      expect(remoteRefs(remote)).toBe(remoteBefore);
    });
  });

  it('a kill -9 while the probe ref is on the remote: the next rehearsal removes it, the next drain is correct', async () => {
    const { root, remote } = busyRepo();
    const marker = join(tempDir('marker'), 'probe-landed');
    // Runs after the probe ref was created: the daemon is killed while it waits for this push.
    hook(
      remote,
      'post-receive',
      `while read old new ref; do case "$ref" in refs/handoff/rehearsal/*) [ "$new" != 0000000000000000000000000000000000000000 ] && touch '${marker}' && sleep 3;; esac; done`,
    );
    const remoteBefore = remoteRefs(remote);
    const stateDir = tempDir('state');
    const first = await startDaemon(stateDir);
    expect((await cli(stateDir, ['prepare', '--json'], root)).json.code).toBe('prepare_entered');
    await until('the probe on the remote', async () => (remoteRefs(remote).includes('refs/handoff/rehearsal/') ? true : undefined), 60_000);
    await first.kill9();
    await until('the orphaned push to end', async () => (git(remote, 'for-each-ref', 'refs/handoff/rehearsal/') === '' ? undefined : true));

    const second = await startDaemon(stateDir);
    daemons.push(second);
    const rehearsed = await cli(stateDir, ['doctor', '--json'], root);
    expect((rehearsed.json.data as { way_out: WayOut }).way_out.state).toBe('proven');
    expect(remoteRefs(remote)).toBe(remoteBefore);

    const now = await cli(stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code).toBe('handoff_ready');
    const cycle = (now.json.data?.['cycle'] as { id: string }).id;
    expect(
      remoteRefs(remote)
        .split('\n')
        .map((line) => line.split(' ')[0])
        .filter((ref) => ref?.includes('handoff'))
        .sort(),
    ).toEqual([`refs/handoff/lease/${cycle}`, `refs/handoff/packages/${cycle}`, `refs/heads/handoff/${cycle}`]);
  });
});
