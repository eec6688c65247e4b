import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { readBlobsAt } from '../../../daemon/git/index.js';
import { git, tempRepo } from '../../support/git.js';

const treeOf = (repo: string, files: Record<string, string>): string => {
  const lines = Object.entries(files).map(([path, text]) => {
    const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: repo, input: text, encoding: 'utf8' }).trim();
    return `100644 blob ${blob}\t${path}`;
  });
  return execFileSync('git', ['mktree'], { cwd: repo, input: `${lines.join('\n')}\n`, encoding: 'utf8' }).trim();
};

/** A commit holding `files` (path → text), made with plumbing so nothing else moves. */
const commitOf = (repo: string, files: Record<string, string>): string => git(repo, 'commit-tree', treeOf(repo, files), '-m', 'records');

describe('readBlobsAt: one path of many commits in two gits', () => {
  it('reads each text byte for byte (multi-byte characters, newlines inside), in the order asked, the same object twice', async () => {
    const repo = tempRepo();
    const first = commitOf(repo, { 'lease.json': '{"a":"é ✓ 𝄞"}\n\nline two\n' });
    const second = commitOf(repo, { 'lease.json': 'x' });
    expect(await readBlobsAt(repo, [second, first, second], 'lease.json', 1024)).toEqual([
      { ok: true, text: 'x' },
      { ok: true, text: '{"a":"é ✓ 𝄞"}\n\nline two\n' },
      { ok: true, text: 'x' },
    ]);
  });

  it('a path that is missing, a directory or over the bound is said, and not read', async () => {
    const repo = tempRepo();
    const none = commitOf(repo, { 'other.json': '{}' });
    const big = commitOf(repo, { 'lease.json': 'y'.repeat(2048) });
    const inner = treeOf(repo, { inner: '{}' });
    const outer = execFileSync('git', ['mktree'], { cwd: repo, input: `040000 tree ${inner}\tlease.json\n`, encoding: 'utf8' }).trim();
    const nested = git(repo, 'commit-tree', outer, '-m', 'a directory');
    expect(await readBlobsAt(repo, [none, big, nested], 'lease.json', 1024)).toEqual([
      { ok: false, why: 'lease.json is missing' },
      { ok: false, why: 'lease.json is too large (2048 bytes, at most 1024)' },
      { ok: false, why: 'lease.json is a tree, not a file' },
    ]);
  });
});
