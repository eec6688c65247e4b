import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { git, GitError, runGit } from '../../../daemon/git/index.js';
import { tempDir, tempRepo } from '../../support/git.js';

const saved = process.env;
afterEach(() => {
  process.env = saved;
});

/** Every process whose command line holds `marker`, from /proc. */
function processesWith(marker: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmdline.includes(marker)) found.push(`${pid}: ${cmdline}`);
    } catch {
      // The process ended while the directory was read.
      continue;
    }
  }
  return found;
}

describe('the git runner', () => {
  it('ignores GIT_* from the daemon’s environment (config, exec path, repository, ssh, proxy)', async () => {
    const repo = tempRepo();
    const elsewhere = tempRepo();
    process.env = { ...saved };
    process.env['GIT_CONFIG_PARAMETERS'] = "'user.injected'='yes'";
    process.env['GIT_CONFIG_COUNT'] = '1';
    process.env['GIT_CONFIG_KEY_0'] = 'user.counted';
    process.env['GIT_CONFIG_VALUE_0'] = 'yes';
    process.env['GIT_EXEC_PATH'] = '/nonexistent/exec-path';
    process.env['GIT_DIR'] = join(elsewhere, '.git');
    process.env['GIT_SSH'] = '/nonexistent/ssh';
    process.env['GIT_PROXY_COMMAND'] = '/nonexistent/proxy';
    process.env['EDITOR'] = 'vim';
    expect((await runGit(['config', '--get', 'user.injected'], { cwd: repo })).code).toBe(1);
    expect((await runGit(['config', '--get', 'user.counted'], { cwd: repo })).code).toBe(1);
    expect(await git(['rev-parse', '--show-toplevel'], { cwd: repo })).toBe(repo);
    const vars = await git(['var', '-l'], { cwd: repo });
    expect(vars).not.toMatch(/nonexistent/);
    expect(await git(['config', '--get', 'core.hooksPath'], { cwd: repo })).toBe('/dev/null');
  });

  it('puts --end-of-options before data: an option-shaped remote is a repository name, never run', async () => {
    const repo = tempRepo();
    const canary = join(tempDir('canary'), 'canary');
    const fetched = await runGit(['fetch', '--end-of-options', `--upload-pack=touch ${canary}`, 'main'], { cwd: repo });
    expect(fetched.code).not.toBe(0);
    expect(existsSync(canary)).toBe(false);
  });

  it('keeps simple-git’s guard: an unsafe option in the arguments is refused before git runs', async () => {
    const repo = tempRepo();
    const canary = join(tempDir('canary'), 'canary');
    const result = await runGit(['fetch', `--upload-pack=touch ${canary}`, '.'], { cwd: repo });
    expect(result).toMatchObject({ code: null, startError: expect.stringMatching(/refused before running git.*allowUnsafePack/) as unknown });
    expect(existsSync(canary)).toBe(false);
  });

  it('feeds stdin when asked and closes it otherwise', async () => {
    const repo = tempRepo();
    expect(await git(['hash-object', '--stdin'], { cwd: repo, input: 'hello\n' })).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
    // With stdin left open this would wait for input until the timeout.
    expect(await runGit(['cat-file', '--batch'], { cwd: repo, timeoutMs: 20_000 })).toMatchObject({ code: 0, stdout: '', timedOut: false });
  });

  it('a timeout kills git and everything it started: no filter child or grandchild outlives the call', async () => {
    const repo = tempRepo();
    const marker = `${process.pid}${Date.now() % 100_000}`;
    // A clean filter that starts a background grandchild and then hangs itself, both deaf to SIGTERM.
    execFileSync('git', ['config', 'filter.slow.clean', `sh -c 'trap "" TERM; sleep 7${marker} & sleep 8${marker}'`], { cwd: repo });
    writeFileSync(join(repo, '.gitattributes'), '*.txt filter=slow\n');
    writeFileSync(join(repo, 'a.txt'), 'content\n');
    const result = await runGit(['add', 'a.txt'], { cwd: repo, timeoutMs: 1_000 });
    expect(result).toMatchObject({ code: null, timedOut: true });
    expect(processesWith(`sleep 8${marker}`)).toEqual([]);
    expect(processesWith(`sleep 7${marker}`)).toEqual([]);
    const error = await git(['add', 'a.txt'], { cwd: repo, timeoutMs: 1_000 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GitError);
    expect((error as GitError).message).toMatch(/^git add a\.txt timed out after 1 s/);
  });

  it('a failure message names the command, never the data after --end-of-options or a credential', async () => {
    const repo = tempRepo();
    const url = 'http://user:s3cret-pa55@127.0.0.1:9/team/repo.git';
    const error = await git(['push', '--porcelain', '--no-verify', '--end-of-options', url, 'HEAD:refs/heads/handoff/x'], {
      cwd: repo,
      timeoutMs: 15_000,
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GitError);
    expect((error as GitError).message).toMatch(/^git push exited 128: /);
    expect((error as GitError).message).not.toContain('s3cret-pa55');
  });

  it('git missing from PATH is a result with a hint, not a crash', async () => {
    const repo = tempRepo();
    process.env = { ...saved, PATH: tempDir('empty-path') };
    expect(await runGit(['status'], { cwd: repo })).toMatchObject({
      code: null,
      startError: expect.stringMatching(/ENOENT.*not installed or not on the daemon's PATH/) as unknown,
    });
    // setsid present, git not.
    const withSetsid = tempDir('setsid-only');
    symlinkSync('/usr/bin/setsid', join(withSetsid, 'setsid'));
    process.env['PATH'] = withSetsid;
    expect(await runGit(['status'], { cwd: repo })).toMatchObject({ code: null, startError: expect.stringMatching(/ENOENT/) as unknown });
    // A "git" that is not a program.
    const bad = tempDir('bad-git');
    writeFileSync(join(bad, 'git'), 'not a program');
    chmodSync(join(bad, 'git'), 0o644);
    process.env['PATH'] = bad;
    expect((await runGit(['status'], { cwd: repo })).startError).toMatch(/git could not be started \((ENOENT|EACCES)\)/);
    const error = await git(['status'], { cwd: repo }).catch((caught: unknown) => caught);
    expect((error as GitError).message).toMatch(/^git status did not run: git could not be started/);
  });

  it('a directory that does not exist is a result, not a throw', async () => {
    expect((await runGit(['status'], { cwd: join(tempDir('gone'), 'missing') })).startError).toMatch(/does not exist/);
  });

  it('EMFILE at spawn is a result with a hint and the daemon process lives on', () => {
    const repo = tempRepo();
    const runner = fileURLToPath(new URL('../../../dist/daemon/git/run-git.js', import.meta.url));
    const script = `
      import { closeSync, openSync } from 'node:fs';
      const { runGit } = await import(${JSON.stringify(runner)});
      const fds = [];
      for (;;) { try { fds.push(openSync('/dev/null', 'r')); } catch { break; } }
      // Two free descriptors: enough for the runner's own work, too few for git's three pipes.
      for (const fd of fds.splice(-2)) closeSync(fd);
      const result = await runGit(['status'], { cwd: ${JSON.stringify(repo)} });
      await new Promise((resolve) => setTimeout(resolve, 200));
      console.log(JSON.stringify({ result, opened: fds.length }));
    `;
    const child = spawnSync('sh', ['-c', `ulimit -n 256 && exec "${process.execPath}" --input-type=module -e "$0"`, script], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(child.status, child.stderr).toBe(0);
    const { result } = JSON.parse(child.stdout) as { result: { code: null; startError: string } };
    expect(result.code).toBeNull();
    expect(result.startError).toMatch(/git could not be started \((EMFILE|ENFILE|unknown error)\)/);
  });
});
