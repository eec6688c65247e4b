import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { busyRepo, hook, userState } from '../support/scenario.js';

let daemon: DaemonProcess;
beforeAll(async () => {
  daemon = await startDaemon();
});
afterAll(async () => {
  await daemon.stop();
});

interface Drain {
  readonly id: string;
  readonly drain: { steps: Record<string, { summary: Record<string, unknown> } | undefined> };
}

function manifestOf(root: string, cycle: string): { checkpoint: { tree: string; commit: string } } {
  return JSON.parse(readFileSync(join(root, '.session-handoff', cycle, 'manifest.json'), 'utf8')) as { checkpoint: { tree: string; commit: string } };
}

/** What `git add -A` records for the work tree, in a scratch index, with hooks and fsmonitor off. */
function addedTree(root: string): string {
  const index = join(tempDir('index'), 'index');
  writeFileSync(index, readFileSync(join(root, '.git', 'index')));
  const env = { ...process.env, GIT_INDEX_FILE: index };
  const off = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false'];
  execFileSync('git', [...off, 'add', '-A', '--sparse'], { cwd: root, env });
  return execFileSync('git', [...off, 'write-tree'], { cwd: root, env, encoding: 'utf8' }).trim();
}

describe('a hostile or unusual repository', () => {
  it('a remote URL that is an option (--upload-pack=...) is refused during handoff now; its command never runs', async () => {
    const { root } = busyRepo();
    const canary = join(tempDir('canary'), 'canary');
    git(root, 'config', 'remote.origin.url', `--upload-pack=touch ${canary}`);
    const before = userState(root);
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code).toBe('drain_blocked');
    expect(now.json.error?.message).toMatch(/starts with '-'.*refused/);
    expect(existsSync(canary)).toBe(false);
    expect(userState(root)).toEqual(before);
  });

  it('hooks and the fsmonitor never run; the clean filter does, and the snapshot is what git add records', async () => {
    const { root, remote } = busyRepo();
    const markers = tempDir('markers');
    for (const name of ['pre-push', 'reference-transaction', 'post-index-change', 'pre-commit', 'post-checkout', 'pre-auto-gc'])
      hook(join(root, '.git'), name, `touch '${markers}/${name}'`);
    const fsmonitor = join(tempDir('fsmonitor'), 'fsmonitor.sh');
    writeFileSync(fsmonitor, `#!/bin/sh\ntouch '${markers}/fsmonitor'\nexit 1\n`);
    chmodSync(fsmonitor, 0o755);
    git(root, 'config', 'core.fsmonitor', fsmonitor);
    git(root, 'config', 'filter.upper.clean', `sh -c "touch '${markers}/filter'; tr a-z A-Z"`);
    git(root, 'config', 'filter.upper.smudge', 'cat');
    writeFileSync(join(root, '.gitattributes'), '*.txt filter=upper\n');
    writeFileSync(join(root, 'shout.txt'), 'quiet words\n');
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code).toBe('handoff_ready');
    expect(readdirSync(markers)).toEqual(['filter']);
    const cycle = (now.json.data?.['cycle'] as Drain).id;
    const { tree, commit } = manifestOf(root, cycle).checkpoint;
    expect(git(remote, 'rev-parse', `refs/heads/handoff/${cycle}`)).toBe(commit);
    expect(git(remote, 'show', `${commit}:shout.txt`)).toBe('QUIET WORDS');
    expect(addedTree(root)).toBe(tree);
  });

  it('a sparse checkout with an untracked file outside the cone reaches HANDOFF_READY with that file recorded', async () => {
    const { root, remote } = busyRepo();
    mkdirSync(join(root, 'docs'));
    writeFileSync(join(root, 'docs', 'guide.md'), 'tracked outside the cone\n');
    git(root, 'add', 'docs/guide.md');
    git(root, 'commit', '-q', '-m', 'docs');
    git(root, 'sparse-checkout', 'set', 'src');
    expect(existsSync(join(root, 'docs', 'guide.md'))).toBe(false);
    mkdirSync(join(root, 'docs'));
    writeFileSync(join(root, 'docs', 'draft.md'), 'untracked outside the cone\n');
    writeFileSync(join(root, 'src', 'app.ts'), 'export const a = 4;\n');
    const before = userState(root);
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code).toBe('handoff_ready');
    const { commit } = manifestOf(root, (now.json.data?.['cycle'] as Drain).id).checkpoint;
    expect(git(remote, 'show', `${commit}:docs/draft.md`)).toBe('untracked outside the cone');
    // Outside the cone the index's version stands (the file is absent from the disk, not deleted).
    expect(git(remote, 'show', `${commit}:docs/guide.md`)).toBe('tracked outside the cone');
    expect(git(remote, 'show', `${commit}:src/app.ts`)).toBe('export const a = 4;');
    expect(userState(root)).toEqual(before);
  });

  it('a file git refuses to add (its required filter fails) is named in the drain record, never a drain blocked for good', async () => {
    const { root, remote } = busyRepo();
    git(root, 'config', 'filter.broken.clean', 'false');
    git(root, 'config', 'filter.broken.required', 'true');
    writeFileSync(join(root, '.gitattributes'), '*.bad filter=broken\n');
    writeFileSync(join(root, 'data.bad'), 'cannot be cleaned\n');
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code).toBe('handoff_ready');
    const cycle = now.json.data?.['cycle'] as Drain;
    expect(cycle.drain.steps['snapshot']?.summary).toMatchObject({ refused: 1, refused_paths: 'data.bad' });
    const { commit } = manifestOf(root, cycle.id).checkpoint;
    expect(git(remote, 'ls-tree', '--name-only', commit)).not.toMatch(/data\.bad/);
    expect(git(remote, 'show', `${commit}:notes.md`)).toBe('untracked notes');
  });
});
