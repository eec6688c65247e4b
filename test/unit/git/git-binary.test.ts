import { execFileSync, type ChildProcess } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findOnPath } from '../../../daemon/git/process-group.js';
import { resolveGit, runGit } from '../../../daemon/git/index.js';
import { tempDir, tempRepo } from '../../support/git.js';

const saved = process.env;
afterEach(() => {
  process.env = saved;
});

const which = (tool: string) => execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim();
const installed = { git: which('git'), setsid: which('setsid') };

/**
 * A PATH of 14 entries with the usable git in the 12th. Before it: a relative entry with a working
 * `git` (relative to the test's cwd), an empty entry, a `git` that is not executable and a directory
 * called `git`; after it, another git that must not be chosen.
 */
function longPath(): { path: string; expected: string } {
  const base = tempDir('long-path');
  const dirs = Array.from({ length: 12 }, (_, i) => join(base, `d${i}`));
  for (const dir of dirs) mkdirSync(dir);
  const d = (i: number) => dirs[i] ?? '';
  writeFileSync(join(d(0), 'git'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  writeFileSync(join(d(2), 'git'), 'not a program');
  chmodSync(join(d(2), 'git'), 0o644);
  mkdirSync(join(d(4), 'git'));
  symlinkSync(installed.setsid, join(d(8), 'setsid'));
  symlinkSync(installed.git, join(d(10), 'git'));
  symlinkSync(installed.git, join(d(11), 'git'));
  return { path: [relative(process.cwd(), d(0)), '', ...dirs.slice(1)].join(':'), expected: join(d(10), 'git') };
}

describe('the git binary', () => {
  it('is the first executable git in PATH order, as execvp would pick it, never from a relative entry', async () => {
    const { path, expected } = longPath();
    expect(await findOnPath('git', path)).toBe(expected);
    expect(await resolveGit(path)).toBe(expected);
    expect(await findOnPath('git', tempDir('empty-path'))).toBeNull();
  });

  it('every git call starts absolute paths, so git late in a long PATH runs without a search per call', async () => {
    const repo = tempRepo();
    const { path, expected } = longPath();
    process.env = { ...saved, PATH: path };
    const spawned: ChildProcess[] = [];
    const onChild = (message: unknown) => spawned.push((message as { process: ChildProcess }).process);
    subscribe('child_process', onChild);
    try {
      for (let i = 0; i < 3; i++) expect(await runGit(['rev-parse', '--show-toplevel'], { cwd: repo })).toMatchObject({ code: 0, stdout: `${repo}\n` });
    } finally {
      unsubscribe('child_process', onChild);
    }
    expect(spawned).toHaveLength(3);
    for (const child of spawned) {
      // setsid, when there is one, execs git by the path it is given: no second search either.
      const [first, second] = child.spawnargs;
      expect(isAbsolute(first ?? '')).toBe(true);
      expect(first === expected || second === expected).toBe(true);
    }
  });

  it('a git installed after a call found none is found by the next call', async () => {
    const repo = tempRepo();
    const bin = tempDir('later-bin');
    process.env = { ...saved, PATH: bin };
    expect((await runGit(['status'], { cwd: repo })).startError).toMatch(/ENOENT.*install it, then run `handoff resume`/);
    symlinkSync(installed.git, join(bin, 'git'));
    expect(await runGit(['rev-parse', '--show-toplevel'], { cwd: repo })).toMatchObject({ code: 0, stdout: `${repo}\n` });
  });
});
