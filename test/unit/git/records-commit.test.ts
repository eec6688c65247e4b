import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commitFiles, boundedFilesAt } from '../../../daemon/git/records-ref.js';
import { git, tempDir, tempRepo } from '../../support/git.js';

const AT = '2026-01-01T00:00:00Z';

/** Nested paths and the names whose order in a tree git decides byte-wise, a directory as if it ended in '/'. */
const FILES: Record<string, string> = {
  '20260101T000000Z-abcdef/manifest.json': '{"a":1}\n',
  '20260101T000000Z-abcdef/HANDOFF.md': '# handoff\n',
  '20260101T000000Z-abcdef/return/r2/manifest.json': '{"b":2}\n',
  'a.b': 'file before the directory a\n',
  'a/x': 'in a\n',
  'a-c': 'dash\n',
  'Zed é.txt': 'non-ASCII name\n',
};

/** The tree git itself makes of the same files: a work tree, its index and write-tree. */
function treeByGit(files: Record<string, string>, objectFormat: 'sha1' | 'sha256'): string {
  const root = tempDir('records-by-git');
  git(root, 'init', '-q', `--object-format=${objectFormat}`);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  git(root, 'add', '-A');
  return git(root, 'write-tree');
}

describe('commitFiles: a records commit from objects alone', () => {
  for (const objectFormat of ['sha1', 'sha256'] as const) {
    it(`writes the tree git's own index would (${objectFormat}), every file readable back, the user's index untouched`, async () => {
      const repo = tempDir('records-commit');
      git(repo, 'init', '-q', `--object-format=${objectFormat}`);
      const commit = await commitFiles(repo, FILES, null, 'handoff test: package', AT);
      expect(git(repo, 'rev-parse', `${commit}^{tree}`)).toBe(treeByGit(FILES, objectFormat));
      expect(git(repo, 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(await boundedFilesAt(repo, commit, { maxEntries: 64, maxDepth: 4, maxFileBytes: 1 << 20, maxTotalBytes: 1 << 22 })).toEqual({
        ok: true,
        files: FILES,
      });
      expect(() => readFileSync(join(repo, '.git', 'index'))).toThrow(/ENOENT/);
    });
  }

  it('a single file at the top and no file at all (the empty tree)', async () => {
    const repo = tempRepo();
    const one = await commitFiles(repo, { 'lease.json': '{}\n' }, null, 'one', AT);
    expect(git(repo, 'rev-parse', `${one}^{tree}`)).toBe(treeByGit({ 'lease.json': '{}\n' }, 'sha1'));
    const none = await commitFiles(repo, {}, one, 'none', AT);
    expect(git(repo, 'rev-parse', `${none}^{tree}`)).toBe('4b825dc642cb6eb9a060e54bf8d69288fbee4904');
    expect(git(repo, 'rev-parse', `${none}^1`)).toBe(one);
    const sha256 = tempDir('records-empty-sha256');
    git(sha256, 'init', '-q', '--object-format=sha256');
    const empty = await commitFiles(sha256, {}, null, 'none', AT);
    expect(git(sha256, 'rev-parse', `${empty}^{tree}`)).toBe(git(sha256, 'hash-object', '-t', 'tree', '/dev/null'));
  });

  it('refuses a path no checkout would take, before any tree is written', async () => {
    const repo = tempRepo();
    for (const path of ['../up', 'a//b', '/abs', 'x/.git/config', 'x/./y']) {
      await expect(commitFiles(repo, { [path]: 'x\n' }, null, 'bad', AT)).rejects.toThrow(/not a record path/);
    }
    await expect(commitFiles(repo, { a: 'file\n', 'a/b': 'under it\n' }, null, 'bad', AT)).rejects.toThrow(/not a record path/);
  });
});
