import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pinnedEndpoint } from '../../daemon/git/lfs.js';
import { cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { hasLfs } from '../support/lfs.js';

/**
 * Issue 23, LFS: a `.lfsconfig` (tracked, or only in a hostile checkpoint's work tree) that names
 * another endpoint — a local HTTP server that records every hit, or a second bare remote — gets
 * nothing: the daemon's `git lfs push` and its verifying fetch go to the remote the user configured.
 */
let daemon: DaemonProcess;
let receiver: DaemonProcess;
let server: Server;
const hits: string[] = [];
let port = 0;

beforeAll(async () => {
  [daemon, receiver] = await Promise.all([startDaemon(), startDaemon()]);
  server = createServer((request, response) => {
    hits.push(`${request.method ?? ''} ${request.url ?? ''}`);
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await Promise.all([daemon.stop(), receiver.stop()]);
  await new Promise((resolve) => server.close(resolve));
});

/** Every object file under a bare repository's LFS store. */
function lfsObjects(bare: string): string[] {
  const dir = join(bare, 'lfs', 'objects');
  return existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => e.name)
    : [];
}

/** An LFS repository whose remote lacks its objects, with `.lfsconfig` (committed or left untracked) pointing elsewhere. */
function hostileLfsRepo(lfsconfig: (decoy: string) => string, tracked: boolean) {
  const base = tempDir('lfs-hostile');
  const remote = join(base, 'remote.git');
  const decoy = join(base, 'decoy.git');
  const root = join(base, 'work');
  git(base, 'init', '-q', '--bare', remote);
  git(base, 'init', '-q', '--bare', decoy);
  git(base, 'init', '-q', '-b', 'main', root);
  git(root, 'lfs', 'install', '--local');
  git(root, 'lfs', 'track', '*.bin');
  writeFileSync(join(root, 'committed.bin'), randomBytes(3000));
  writeFileSync(join(root, 'README.md'), '# lfs\n');
  const config = lfsconfig(pathToFileURL(decoy).href);
  const contents = { 'committed.bin': readFileSync(join(root, 'committed.bin')) };
  if (tracked) writeFileSync(join(root, '.lfsconfig'), config);
  git(root, 'add', '.');
  git(root, 'commit', '-q', '-m', 'initial');
  git(root, 'remote', 'add', 'origin', remote);
  // Pushed without the pre-push hook: the remote has none of the LFS objects yet.
  execFileSync('git', ['push', '-q', '--no-verify', '-u', 'origin', 'main'], { cwd: root });
  writeFileSync(join(root, 'new.bin'), randomBytes(5000));
  if (!tracked) writeFileSync(join(root, '.lfsconfig'), config);
  return { root, remote, decoy, contents: { ...contents, 'new.bin': readFileSync(join(root, 'new.bin')) } };
}

describe.skipIf(!hasLfs)('a .lfsconfig cannot redirect where the daemon sends LFS objects or credentials', () => {
  const cases = [
    {
      name: 'a tracked .lfsconfig naming a local HTTP server (lfs.url, lfs.pushurl, remote.origin.lfsurl, access)',
      tracked: true,
      config: () =>
        [
          '[lfs]',
          `\turl = http://127.0.0.1:${port}/lfs-url`,
          `\tpushurl = http://127.0.0.1:${port}/lfs-pushurl`,
          `[lfs "http://127.0.0.1:${port}/lfs-url"]`,
          '\taccess = basic',
          '[remote "origin"]',
          `\tlfsurl = http://127.0.0.1:${port}/remote-lfsurl`,
          '',
        ].join('\n'),
    },
    {
      name: "a hostile checkpoint's untracked .lfsconfig naming a second bare remote and the HTTP server",
      tracked: false,
      config: (decoy: string) =>
        ['[lfs]', `\turl = ${decoy}`, `\tpushurl = http://127.0.0.1:${port}/checkpoint-pushurl`, '[remote "origin"]', `\tlfsurl = ${decoy}`, ''].join('\n'),
    },
  ];
  for (const item of cases) {
    it(`${item.name}: the objects reach the configured remote, nothing reaches the other`, async () => {
      const before = hits.length;
      const { root, remote, decoy } = hostileLfsRepo(item.config, item.tracked);
      const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
      expect(now.json.code, now.json.error?.message).toBe('handoff_ready');
      const cycle = now.json.data?.['cycle'] as { drain: { steps: Record<string, { summary: Record<string, unknown> }> } };
      expect(cycle.drain.steps['publish']?.summary['lfs_objects']).toBe(2);
      expect(hits.slice(before)).toEqual([]);
      expect(lfsObjects(decoy)).toEqual([]);
      expect(lfsObjects(remote)).toHaveLength(2);
    });
  }

  it('a receiver that switches to a checkpoint whose .lfsconfig names the HTTP server smudges from its remote; nothing reaches the server', async () => {
    const { root, remote, contents } = hostileLfsRepo(cases[0]?.config ?? (() => ''), true);
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code, now.json.error?.message).toBe('handoff_ready');
    const cycle = (now.json.data?.['cycle'] as { id: string }).id;
    // The person's own clone skips the smudge: its checkout of main would read the same .lfsconfig.
    const clone = join(tempDir('lfs-receiver'), 'c');
    execFileSync('git', ['clone', '-q', remote, clone], { env: { ...process.env, GIT_LFS_SKIP_SMUDGE: '1' } });
    git(clone, 'lfs', 'install', '--local');
    const before = hits.length;
    const accepted = await cli(receiver.stateDir, ['accept', cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout', '--json'], clone);
    expect(accepted.json.code, JSON.stringify(accepted.json.error)).toBe('accepted');
    expect(hits.slice(before)).toEqual([]);
    for (const [path, bytes] of Object.entries(contents)) expect(readFileSync(join(clone, path)).equals(bytes), path).toBe(true);
  });

  it("the pinned endpoint is the one git-lfs derives from the remote's URL, whatever a .lfsconfig says", () => {
    const repo = tempDir('lfs-env');
    git(repo, 'init', '-q');
    // git-lfs names an http endpoint as `Endpoint=`; an ssh one is asked through `SSH=` (its Endpoint is only a fallback).
    const seen = (extra: readonly string[], key: 'Endpoint' | 'SSH') =>
      execFileSync('git', [...extra, 'lfs', 'env'], { cwd: repo, encoding: 'utf8' })
        .split('\n')
        .filter((line) => line.trim().startsWith(`${key}=`))
        .join('\n');
    for (const [url, key] of [
      ['https://example.invalid/owner/repo', 'Endpoint'],
      ['https://example.invalid/owner/repo.git/', 'Endpoint'],
      ['git@example.invalid:owner/repo.git', 'SSH'],
    ] as const) {
      rmSync(join(repo, '.lfsconfig'), { force: true });
      git(repo, 'remote', 'add', 'origin', url);
      const derived = seen([], key);
      expect(derived).toContain('example.invalid');
      writeFileSync(join(repo, '.lfsconfig'), `[lfs]\n\turl = ssh://attacker.invalid/x\n\tpushurl = http://127.0.0.1:${port}/x\n`);
      expect(seen([], key)).not.toBe(derived);
      expect(seen(pinnedEndpoint(url), key)).toBe(derived);
      git(repo, 'remote', 'remove', 'origin');
    }
  });
});
