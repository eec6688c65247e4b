import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { changedPaths } from '../../../daemon/evacuation/secret-scan.js';
import { git, tempRepo } from '../../support/git.js';

/** The two listings changedPaths made before one `git status` replaced them. */
function diffAndOthers(root: string): string[] {
  const split = (text: string) => text.split('\0').filter(Boolean);
  const tracked = git(root, 'diff', '--name-only', '-z', '--no-renames', '--ignore-submodules=all', 'HEAD', '--');
  const untracked = git(root, 'ls-files', '-z', '--others', '--exclude-standard');
  return [...new Set([...split(tracked), ...split(untracked)])].sort();
}

describe('changedPaths: every file the snapshot would add or change, from one git status', () => {
  it('lists what diff HEAD and ls-files --others listed: staged, unstaged, deleted, renamed, untracked, names with spaces; not ignored files', async () => {
    const root = tempRepo();
    mkdirSync(join(root, 'src'));
    for (const name of ['a.ts', 'b.ts', 'c.ts', 'old name.ts', 'gone.ts']) writeFileSync(join(root, 'src', name), `// ${name}\n`);
    writeFileSync(join(root, '.gitignore'), '*.log\n');
    git(root, 'add', '.');
    git(root, 'commit', '-q', '-m', 'files');
    writeFileSync(join(root, 'src', 'a.ts'), '// staged\n');
    git(root, 'add', 'src/a.ts');
    writeFileSync(join(root, 'src', 'b.ts'), '// unstaged\n');
    writeFileSync(join(root, 'src', 'c.ts'), '// staged, then more\n');
    git(root, 'add', 'src/c.ts');
    writeFileSync(join(root, 'src', 'c.ts'), '// and more\n');
    git(root, 'mv', 'src/old name.ts', 'src/new name.ts');
    rmSync(join(root, 'src', 'gone.ts'));
    writeFileSync(join(root, 'untracked file.md'), 'new\n');
    writeFileSync(join(root, 'debug.log'), 'ignored\n');
    const listed = await changedPaths(root, git(root, 'rev-parse', 'HEAD'));
    expect(listed).toEqual(diffAndOthers(root));
    expect(listed).toEqual(['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/gone.ts', 'src/new name.ts', 'src/old name.ts', 'untracked file.md']);
  });

  it('also lists a file staged and then changed back to HEAD: scanned, which is only stricter', async () => {
    const root = tempRepo();
    writeFileSync(join(root, 'README.md'), 'staged\n');
    git(root, 'add', 'README.md');
    writeFileSync(join(root, 'README.md'), '# scratch\n');
    expect(diffAndOthers(root)).toEqual([]);
    expect(await changedPaths(root, git(root, 'rev-parse', 'HEAD'))).toEqual(['README.md']);
  });
});
