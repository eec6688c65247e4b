import { redactCredentials } from '../../protocol/index.js';
import { runGit, type GitResult } from './run-git.js';

/**
 * The names git's push matches a destination against besides the name itself: its DWIM rules apply
 * even to a full `refs/...` name, so a remote ref of one of them makes a push or delete of `ref`
 * ambiguous, or, when `ref` is absent, moves that ref instead.
 */
export const lookAlikeNames = (ref: string): string[] => [
  `refs/${ref}`,
  `refs/tags/${ref}`,
  `refs/heads/${ref}`,
  `refs/remotes/${ref}`,
  `refs/remotes/${ref}/HEAD`,
];

/** The look-alikes of `ref` the remote holds now (`ls-remote` matches a name's tail, so it lists them); empty when it cannot be read. */
async function remoteLookAlikes(root: string, url: string, ref: string, timeoutMs: number): Promise<string[]> {
  const listed = await runGit(['ls-remote', '--end-of-options', url, ref], { cwd: root, timeoutMs });
  const names = new Set(listed.code === 0 ? listed.stdout.split('\n').map((line) => line.split('\t')[1]) : []);
  return lookAlikeNames(ref).filter((name) => names.has(name));
}

/**
 * What a push to `url` did to a look-alike instead of the refs named (`wanted`, in full), in words that
 * name it; null when it touched only those. Read from git's refusal of an ambiguous name (then the
 * remote is asked which look-alike it holds) and from the `--porcelain` lines
 * (`flag<TAB>src:dst<TAB>summary`), whose `dst` is the ref git actually matched.
 */
export async function lookAlikePush(root: string, url: string, result: GitResult, wanted: readonly string[], timeoutMs: number): Promise<string | null> {
  const ambiguous = /dst refspec (\S+) matches more than one/.exec(result.stderr)?.[1];
  if (ambiguous !== undefined) {
    const held = await remoteLookAlikes(root, url, ambiguous, timeoutMs);
    const named = held.length > 0 ? held.join(', ') : 'a look-alike';
    return redactCredentials(
      `the remote holds ${named}, which git's push cannot tell apart from ${ambiguous}, so git refused the push; the remote's owner removes it`,
    );
  }
  for (const line of result.stdout.split('\n')) {
    const dst = /^.\t[^\t]*:([^\t]+)\t/.exec(line)?.[1];
    if (dst !== undefined && !wanted.includes(dst))
      return redactCredentials(`git's push went to ${dst} on the remote, a look-alike of ${wanted.join(', ')}; the remote's owner removes it`);
  }
  return null;
}
