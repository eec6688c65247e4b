import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { headAndIndex, snapshotWorkTree } from '../../../daemon/git/index.js';
import { git, tempDir, tempRepo } from '../../support/git.js';

const REF = 'refs/heads/handoff/20261129T081500Z-k3f9qa';
const request = { ref: REF, message: 'handoff test: snapshot', createdAt: '2026-11-29T08:15:00Z', expectedOld: null };

describe('the snapshot commit and its ref', () => {
  it('commits the work tree on HEAD, writes only its own ref, and a repeat (a resumed drain) finds its own commit there', async () => {
    const root = tempRepo();
    writeFileSync(join(root, 'README.md'), '# changed\n');
    writeFileSync(join(root, 'new.txt'), 'new\n');
    // The user's index byte for byte (\`git status\` would refresh it), HEAD and branches.
    const user = () => ({
      index: readFileSync(join(root, '.git', 'index')),
      head: git(root, 'symbolic-ref', 'HEAD'),
      refs: git(root, 'for-each-ref', 'refs/heads/main'),
    });
    const before = user();
    const first = await snapshotWorkTree(root, request);
    expect(git(root, 'rev-parse', REF)).toBe(first.commit);
    expect(first.parent).toBe(git(root, 'rev-parse', 'HEAD'));
    expect(git(root, 'ls-tree', '--name-only', first.tree).split('\n')).toEqual(['README.md', 'new.txt']);
    expect(user()).toEqual(before);
    // The same request again: update-ref refuses (the ref exists), the ref holds this very commit.
    expect(await snapshotWorkTree(root, request)).toEqual(first);
    // The next revision moves the ref on from the commit the journal names.
    writeFileSync(join(root, 'new.txt'), 'newer\n');
    const next = await snapshotWorkTree(root, { ...request, expectedOld: first.commit });
    expect(next.parent).toBe(first.commit);
    expect(git(root, 'rev-parse', REF)).toBe(next.commit);
  });

  it('never moves a ref that holds something the journal does not expect', async () => {
    const root = tempRepo();
    const head = git(root, 'rev-parse', 'HEAD');
    git(root, 'update-ref', REF, head);
    writeFileSync(join(root, 'new.txt'), 'new\n');
    await expect(snapshotWorkTree(root, request)).rejects.toMatchObject({ code: 'corrupt_record' });
    const other = git(root, 'commit-tree', '-m', 'another revision', `${head}^{tree}`);
    await expect(snapshotWorkTree(root, { ...request, expectedOld: other })).rejects.toMatchObject({ code: 'corrupt_record' });
    expect(git(root, 'rev-parse', REF)).toBe(head);
  });

  it('commits on the HEAD the caller read (the secret scan listed the changes against it)', async () => {
    const root = tempRepo();
    const scanned = git(root, 'rev-parse', 'HEAD');
    writeFileSync(join(root, 'later.txt'), 'committed after the scan\n');
    git(root, 'add', 'later.txt');
    git(root, 'commit', '-q', '-m', 'later');
    const result = await snapshotWorkTree(root, { ...request, repository: { head: scanned, index: join(root, '.git', 'index') } });
    expect(result.parent).toBe(scanned);
    expect(git(root, 'ls-tree', '--name-only', result.tree).split('\n')).toEqual(['README.md', 'later.txt']);
  });

  it('reads HEAD and the index path in one git process: unborn HEAD, a linked worktree, no repository', async () => {
    const root = tempRepo();
    expect(await headAndIndex(root)).toEqual({ head: git(root, 'rev-parse', 'HEAD'), index: join(root, '.git', 'index') });
    const linked = join(tempDir('linked'), 'wt');
    git(root, 'worktree', 'add', '-q', '-b', 'side', linked);
    expect(await headAndIndex(linked)).toEqual({ head: git(root, 'rev-parse', 'HEAD'), index: join(root, '.git', 'worktrees', 'wt', 'index') });
    const unborn = tempDir('unborn');
    git(unborn, 'init', '-q', '-b', 'main');
    expect(await headAndIndex(unborn)).toEqual({ head: null, index: join(unborn, '.git', 'index') });
    await expect(headAndIndex(tempDir('plain'))).rejects.toThrow(/exited 128: fatal: not a git repository/);
  });
});
