import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, lstatSync, writeFileSync, mkdirSync, chmodSync } from 'node:fs';
import { join, relative } from 'node:path';
import { git, tempDir } from './git.js';

/**
 * A repository with every kind of change a real session leaves behind — staged, unstaged,
 * untracked and ignored files, a stash, another branch — and a bare remote it pushes to.
 */
export function busyRepo(): { root: string; remote: string } {
  const base = tempDir('scenario');
  const remote = join(base, 'remote.git');
  const root = join(base, 'work');
  git(base, 'init', '-q', '--bare', remote);
  // The remote keeps a reflog, so a test can count the updates of each ref (nothing pushed twice).
  git(remote, 'config', 'core.logAllRefUpdates', 'always');
  git(base, 'init', '-q', '-b', 'main', root);
  writeFileSync(join(root, 'README.md'), '# busy\n');
  writeFileSync(join(root, '.gitignore'), '*.log\nbuild/\n');
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'src', 'app.ts'), 'export const a = 1;\n');
  writeFileSync(join(root, 'AGENTS.md'), '# rules\nrun the tests\n');
  git(root, 'add', '.');
  git(root, 'commit', '-q', '-m', 'initial');
  git(root, 'remote', 'add', 'origin', remote);
  git(root, 'push', '-q', '-u', 'origin', 'main');
  git(root, 'branch', 'feature');
  git(root, 'push', '-q', 'origin', 'feature');
  // A stash the daemon must leave alone.
  writeFileSync(join(root, 'README.md'), '# busy\nstashed line\n');
  git(root, 'stash', 'push', '-q', '-m', 'keep me');
  // Staged, then unstaged on top of the same file; another staged-only file; untracked; ignored.
  writeFileSync(join(root, 'src', 'app.ts'), 'export const a = 2;\n');
  git(root, 'add', 'src/app.ts');
  writeFileSync(join(root, 'src', 'app.ts'), 'export const a = 3;\n');
  writeFileSync(join(root, 'src', 'staged.ts'), 'export const s = true;\n');
  git(root, 'add', 'src/staged.ts');
  writeFileSync(join(root, 'notes.md'), 'untracked notes\n');
  mkdirSync(join(root, 'build'));
  writeFileSync(join(root, 'build', 'out.js'), 'ignored build output\n');
  writeFileSync(join(root, 'debug.log'), 'ignored log\n');
  return { root, remote };
}

export function hook(gitDir: string, name: string, body: string): void {
  const path = join(gitDir, 'hooks', name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function filesUnder(root: string, dir = root, out: Record<string, string> = {}): Record<string, string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const rel = relative(root, path);
    if (rel === '.git' || rel === '.session-handoff') continue;
    const stat = lstatSync(path);
    if (stat.isDirectory()) filesUnder(root, path, out);
    else out[rel] = stat.isSymbolicLink() ? `link` : sha(readFileSync(path));
  }
  return out;
}

/** Everything of the user's that evacuation must leave byte-identical. */
export function userState(root: string) {
  return {
    index: sha(readFileSync(join(root, '.git', 'index'))),
    head: readFileSync(join(root, '.git', 'HEAD'), 'utf8'),
    // The daemon's own namespaces (checkpoint branches, travelling records, the rehearsal's local package) are not the user's refs.
    refs: git(root, 'for-each-ref', '--format=%(refname) %(objectname)')
      .split('\n')
      .filter((line) => !line.startsWith('refs/heads/handoff/') && !line.startsWith('refs/handoff/') && !line.startsWith('refs/session-handoff/')),
    stash: git(root, 'stash', 'list'),
    status: git(root, 'status', '--porcelain=v2', '--untracked-files=all'),
    files: filesUnder(root),
  };
}

/** path → blob id of the work tree as git would commit it: tracked and untracked, ignored excluded. */
export function workTreeBlobs(root: string): Record<string, string> {
  const paths = git(root, 'ls-files', '-co', '--exclude-standard', '-z')
    .split('\0')
    .filter((p) => p !== '' && !p.startsWith('.session-handoff/'));
  const unique = [...new Set(paths)].filter((p) => {
    try {
      return lstatSync(join(root, p)).isFile();
    } catch {
      return false;
    }
  });
  const ids = execFileSync('git', ['hash-object', '--stdin-paths'], { cwd: root, input: unique.join('\n'), encoding: 'utf8' })
    .trim()
    .split('\n');
  return Object.fromEntries(unique.map((p, i): [string, string] => [p, ids[i] ?? '']).sort(([a], [b]) => a.localeCompare(b)));
}

/** path → blob id of a commit's tree, in any repository (the bare remote included). */
export function commitBlobs(repo: string, commit: string): Record<string, string> {
  const lines = git(repo, 'ls-tree', '-r', '-z', commit).split('\0').filter(Boolean);
  return Object.fromEntries(
    lines
      .map((line): [string, string] => {
        const [meta = '', path = ''] = line.split('\t');
        return [path, meta.split(' ')[2] ?? ''];
      })
      .sort(([a], [b]) => a.localeCompare(b)),
  );
}

/** A bare remote and two clones of it: the primary's checkout and the emergency executor's. */
export function twoClones(): { remote: string; a: string; b: string } {
  const base = tempDir('clones');
  const remote = join(base, 'remote.git');
  const a = join(base, 'a');
  const b = join(base, 'b');
  git(base, 'init', '-q', '--bare', '-b', 'main', remote);
  git(base, 'init', '-q', '-b', 'main', a);
  writeFileSync(join(a, 'f.txt'), 'one\n');
  writeFileSync(join(a, 'AGENTS.md'), '# rules\n');
  git(a, 'add', '.');
  git(a, 'commit', '-q', '-m', 'init');
  git(a, 'remote', 'add', 'origin', remote);
  git(a, 'push', '-q', '-u', 'origin', 'main');
  git(base, 'clone', '-q', remote, b);
  return { remote, a, b };
}
