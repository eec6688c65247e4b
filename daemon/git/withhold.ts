import { git, runGit } from './run-git.js';

/** The pathspecs that keep withheld files out of `add`, so their content is never even hashed. */
export const withholdExcludes = (paths: readonly string[]): string[] => paths.map((path) => `:(exclude,literal)${path}`);

/**
 * After `add` into a scratch index, gives each withheld path its committed entry (HEAD's mode and
 * blob) or, when HEAD has none, no entry at all: the scratch index may still hold what the user
 * staged, and that is exactly the content being withheld. Only the scratch index in `env` changes.
 */
export async function keepCommitted(root: string, env: Readonly<Record<string, string>>, paths: readonly string[]): Promise<void> {
  if (paths.length === 0) return;
  const head = await runGit(['rev-parse', '-q', '--verify', 'HEAD^{commit}'], { cwd: root });
  const entries = new Map<string, string>();
  if (head.code === 0) {
    const listing = await git(['ls-tree', '-z', '--full-tree', '--end-of-options', head.stdout.trim(), '--', ...paths], { cwd: root, timeoutMs: 120_000 });
    for (const record of listing.split('\0')) {
      const tab = record.indexOf('\t');
      const [mode, type, sha] = record.slice(0, tab).split(' ');
      const path = record.slice(tab + 1);
      if (tab > 0 && type === 'blob' && paths.includes(path)) entries.set(path, `${mode} ${sha}\t${path}\0`);
    }
  }
  const absent = paths.filter((path) => !entries.has(path));
  if (entries.size > 0) await git(['update-index', '-z', '--index-info'], { cwd: root, env, input: [...entries.values()].join('') });
  if (absent.length > 0) await git(['update-index', '--force-remove', '--', ...absent], { cwd: root, env });
}
