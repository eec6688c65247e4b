import { execFileSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './git.js';

// git-lfs comes from Debian's git-lfs package (.ci/run installs it).
export const hasLfs = (() => {
  try {
    execFileSync('git', ['lfs', 'version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** A PATH for a daemon with git and what it starts git with, but no git-lfs. */
export function pathWithoutLfs(): string {
  const bin = tempDir('no-lfs-bin');
  for (const tool of ['git', 'setsid', 'sh']) symlinkSync(execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(), join(bin, tool));
  return bin;
}
