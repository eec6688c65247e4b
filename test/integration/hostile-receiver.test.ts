import { execFile, execFileSync } from 'node:child_process';
import { createHash, randomInt } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { twoClones } from '../support/scenario.js';
import { machineStateDir } from '../support/machine-state.js';

/**
 * Issue 23, the receiver: a remote that commits `.session-handoff` (or a cycle directory, or a
 * package file) as a link, and adds files of its own under `refs/handoff/packages/<cycle>`, gets
 * nothing written through the link and nothing unnamed written at all. `verify` writes nothing in the
 * work tree; `accept` writes only the files the manifests name, after every check passed, and refuses
 * a link by name (linked_path, 65) before the lease moves.
 */
let source: DaemonProcess;
let receiver: DaemonProcess;
let remote: string;
let baseline: { manifest: Json; handoff: string; lease: Json; commit: string };

type Json = Record<string, unknown>;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const freshCycle = () => `20261130T${String(randomInt(100000, 999999))}Z-${Array.from({ length: 6 }, () => BASE32[randomInt(32)]).join('')}`;
const IDENTITY = { GIT_AUTHOR_NAME: 'x', GIT_AUTHOR_EMAIL: 'x@x', GIT_COMMITTER_NAME: 'x', GIT_COMMITTER_EMAIL: 'x@x' };

function bare(args: string[], input?: string): string {
  return execFileSync('git', args, { cwd: remote, input, encoding: 'utf8', env: { ...process.env, ...IDENTITY } }).trim();
}

/** A commit holding `files` (nested paths allowed), written straight into the remote as anyone with push rights could. */
function craftCommit(files: Record<string, string>): string {
  type Dir = { [name: string]: string | Dir };
  const root: Dir = {};
  for (const [path, text] of Object.entries(files)) {
    const parts = path.split('/');
    let dir = root;
    for (const part of parts.slice(0, -1)) dir = (dir[part] ??= {}) as Dir;
    dir[parts.at(-1) ?? ''] = text;
  }
  const tree = (dir: Dir): string => {
    const lines = Object.entries(dir).map(([name, value]) =>
      typeof value === 'string' ? `100644 blob ${bare(['hash-object', '-w', '--stdin'], value)}\t${name}` : `040000 tree ${tree(value)}\t${name}`,
    );
    return bare(['mktree'], `${lines.join('\n')}\n`);
  };
  return bare(['commit-tree', '-m', 'crafted', tree(root)]);
}

/** An offered cycle on the remote: the baseline package re-keyed, with `extra` files of the attacker's beside it. */
function publish(extra: Record<string, string> = {}): string {
  const cycle = freshCycle();
  const manifest = structuredClone(baseline.manifest);
  manifest['cycle_id'] = cycle;
  (manifest['checkpoint'] as Json)['ref'] = `refs/heads/handoff/${cycle}`;
  const manifestText = `${JSON.stringify(manifest, null, 2)}\n`;
  const lease = { ...structuredClone(baseline.lease), cycle, manifest: { path: 'manifest.json', sha256: sha256(manifestText) } };
  const files = { [`${cycle}/manifest.json`]: manifestText, [`${cycle}/HANDOFF.md`]: baseline.handoff };
  for (const [path, text] of Object.entries(extra)) files[`${cycle}/${path}`] = text;
  bare(['update-ref', `refs/handoff/packages/${cycle}`, craftCommit(files)]);
  bare(['update-ref', `refs/handoff/lease/${cycle}`, craftCommit({ 'lease.json': `${JSON.stringify(lease, null, 2)}\n` })]);
  bare(['update-ref', `refs/heads/handoff/${cycle}`, baseline.commit]);
  return cycle;
}

/** A branch of the remote whose tree adds `link` → `target` (a symbolic link), pushed as an attacker would. */
function linkBranch(name: string, link: string, target: string): void {
  const work = join(tempDir('attacker'), 'w');
  git(tempDir('x'), 'clone', '-q', remote, work);
  git(work, 'switch', '-q', '-c', name);
  mkdirSync(dirname(join(work, link)), { recursive: true });
  symlinkSync(target, join(work, link));
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', `add ${link}`);
  git(work, 'push', '-q', 'origin', name);
}

/** A fresh clone of `branch` in its own directory, beside which the links' targets would land. */
function freshClone(branch = 'main'): { clone: string; beside: string } {
  const beside = tempDir('fresh');
  const clone = join(beside, 'c');
  git(beside, 'clone', '-q', '-b', branch, remote, clone);
  // The links' targets exist, as `~/.vim/pack` does: a write through them would land there.
  for (const dir of ['planted', 'planted-dir']) mkdirSync(join(beside, dir));
  return { clone, beside };
}

/** Whether anything reached a link's target: a file where none was, or an entry in the planted directory. */
const landed = (beside: string, planted: string) =>
  existsSync(join(beside, planted)) && (!lstatSync(join(beside, planted)).isDirectory() || readdirSync(join(beside, planted)).length > 0);
const leaseState = (cycle: string) => (JSON.parse(bare(['show', `refs/handoff/lease/${cycle}:lease.json`])) as Json)['state'];
const head = (repo: string) => git(repo, 'rev-parse', 'HEAD');

beforeAll(async () => {
  [source, receiver] = await Promise.all([startDaemon(machineStateDir()), startDaemon(machineStateDir())]);
  let a: string;
  ({ remote, a } = twoClones());
  writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
  const now = await cli(source.stateDir, ['now', '--no-wait', '--json'], a);
  expect(now.json.code).toBe('handoff_ready');
  const cycle = (now.json.data?.['cycle'] as { id: string }).id;
  const manifest = JSON.parse(readFileSync(join(a, '.session-handoff', cycle, 'manifest.json'), 'utf8')) as Json;
  baseline = {
    manifest,
    handoff: readFileSync(join(a, '.session-handoff', cycle, 'HANDOFF.md'), 'utf8'),
    lease: JSON.parse(bare(['show', `refs/handoff/lease/${cycle}:lease.json`])) as Json,
    commit: (manifest['checkpoint'] as Json)['commit'] as string,
  };
  linkBranch('linked-top', '.session-handoff', '../planted');
}, 60_000);

afterAll(async () => {
  await Promise.all([source.stop(), receiver.stop()]);
});

describe('the receiver writes nothing until the verdict, and then only what the manifest names', () => {
  it('an extra package file behind a linked .session-handoff: verify and accept refuse it (74, named); nothing is written anywhere', async () => {
    const cycle = publish({ 'start/plugin.vim': 'call system("touch /tmp/owned")\n' });
    const { clone, beside } = freshClone('linked-top');
    for (const command of [
      ['verify', cycle, '--from', 'origin'],
      ['accept', cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout'],
    ]) {
      const result = await cli(receiver.stateDir, [...command, '--json'], clone);
      expect(result.json.code, JSON.stringify(result.json)).toBe('corrupt_record');
      expect(result.code).toBe(74);
      expect(result.json.error?.message).toContain('start/plugin.vim');
    }
    expect(readdirSync(join(beside, 'planted'))).toEqual([]);
    expect(lstatSync(join(clone, '.session-handoff')).isSymbolicLink()).toBe(true);
    expect(leaseState(cycle)).toBe('offered');
  });

  it('an unnamed file is refused in a plain clone too, and verify leaves the work tree as it was', async () => {
    const cycle = publish({ 'notes.txt': 'not in any manifest\n' });
    const { clone } = freshClone();
    const verified = await cli(receiver.stateDir, ['verify', cycle, '--from', 'origin', '--json'], clone);
    expect(verified.json.code).toBe('corrupt_record');
    expect(verified.json.error?.message).toContain('notes.txt');
    expect(existsSync(join(clone, '.session-handoff'))).toBe(false);
  });

  it('a valid package: verify writes nothing, whatever its verdict; a passing accept writes exactly the named files', async () => {
    const cycle = publish();
    const { clone } = freshClone();
    writeFileSync(join(clone, 'f.txt'), 'diverged on purpose\n');
    const diverged = await cli(receiver.stateDir, ['verify', cycle, '--from', 'origin', '--json'], clone);
    expect(diverged.json.code).toBe('diverged');
    git(clone, 'checkout', '--', 'f.txt');
    const verified = await cli(receiver.stateDir, ['verify', cycle, '--from', 'origin', '--checkout', '--json'], clone);
    expect(verified.json.code, JSON.stringify(verified.json)).toBe('verified');
    expect(verified.json.data?.['manifest']).toBe(`refs/handoff/packages/${cycle}:${cycle}/manifest.json`);
    expect(existsSync(join(clone, '.session-handoff'))).toBe(false);
    expect(git(clone, 'status', '--porcelain', '--untracked-files=all')).toBe('');

    const accepted = await cli(receiver.stateDir, ['accept', cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout', '--json'], clone);
    expect(accepted.json.code, JSON.stringify(accepted.json)).toBe('accepted');
    expect(readdirSync(join(clone, '.session-handoff', cycle)).sort()).toEqual(['HANDOFF.md', 'manifest.json']);
    expect(accepted.json.data?.['manifest']).toBe(join(clone, '.session-handoff', cycle, 'manifest.json'));
  });

  it('a linked .session-handoff/: verify writes nothing through it; accept is refused (linked_path, 65, named) before the lease moves', async () => {
    const cycle = publish();
    const { clone, beside } = freshClone('linked-top');
    const before = head(clone);
    const verified = await cli(receiver.stateDir, ['verify', cycle, '--from', 'origin', '--checkout', '--json'], clone);
    expect(['verified', 'diverged']).toContain(verified.json.code);
    expect(readdirSync(join(beside, 'planted'))).toEqual([]);

    const accepted = await cli(receiver.stateDir, ['accept', cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout', '--json'], clone);
    expect(accepted.json.code, JSON.stringify(accepted.json)).toBe('linked_path');
    expect(accepted.code).toBe(65);
    expect(accepted.json.error?.message).toContain(join(clone, '.session-handoff'));
    expect(accepted.json.error?.hint).toMatch(/remove it/);
    expect(readdirSync(join(beside, 'planted'))).toEqual([]);
    expect(leaseState(cycle)).toBe('offered');
    expect(head(clone)).toBe(before);
  });

  it('a linked cycle directory or package file is refused by name, and nothing lands where it points', async () => {
    for (const [branch, within, target, planted] of [
      ['linked-cycle', '', '../../planted-dir', 'planted-dir'],
      ['linked-file', '/HANDOFF.md', '../../../planted-file', 'planted-file'],
    ] as const) {
      const cycle = publish();
      linkBranch(branch, `.session-handoff/${cycle}${within}`, target);
      const { clone, beside } = freshClone(branch);
      const verified = await cli(receiver.stateDir, ['verify', cycle, '--from', 'origin', '--json'], clone);
      expect(verified.json.code).not.toBe('linked_path');
      const accepted = await cli(receiver.stateDir, ['accept', cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout', '--json'], clone);
      expect(accepted.json.code, JSON.stringify(accepted.json)).toBe('linked_path');
      expect(accepted.json.error?.message).toContain(join(clone, '.session-handoff', `${cycle}${within}`));
      expect(landed(beside, planted)).toBe(false);
      expect(leaseState(cycle)).toBe('offered');
    }
  });

  it('a clone that carries node_modules/.bin/handoff: the installed handoff accepts, starting its own daemon, and never runs it', async () => {
    const cycle = publish();
    const work = join(tempDir('attacker'), 'w');
    git(tempDir('x'), 'clone', '-q', remote, work);
    git(work, 'switch', '-q', '-c', 'with-bin');
    const canary = join(tempDir('canary'), 'ran');
    mkdirSync(join(work, 'node_modules', '.bin'), { recursive: true });
    for (const name of ['handoff', 'session-handoff', 'git']) {
      writeFileSync(join(work, 'node_modules', '.bin', name), `#!/bin/sh\ntouch '${canary}'\n`);
      chmodSync(join(work, 'node_modules', '.bin', name), 0o755);
    }
    writeFileSync(join(work, 'package.json'), '{"name":"x","bin":{"handoff":"node_modules/.bin/handoff"}}\n');
    git(work, 'add', '-A');
    git(work, 'commit', '-q', '-m', 'a bin of its own');
    git(work, 'push', '-q', 'origin', 'with-bin');
    const { clone } = freshClone('with-bin');
    // No daemon serves this state dir: the command starts one, as a cloud agent's first command does.
    const dir = machineStateDir();
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'HANDOFF_NO_AUTO_START'));
    const run = (args: string[]) =>
      new Promise<string>((resolve) =>
        execFile(process.execPath, [CLI, '--state-dir', dir, ...args], { cwd: clone, env, encoding: 'utf8', timeout: 60_000 }, (_error, stdout) =>
          resolve(stdout),
        ),
      );
    const answer = JSON.parse(await run(['accept', cycle, '--from', 'origin', '--as', 'cloud-agent', '--checkout', '--json'])) as { code: string };
    expect(answer.code).toBe('accepted');
    await run(['daemon', 'stop']);
    expect(existsSync(canary)).toBe(false);
  });
});
