import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isOurHook, spooledEventCommand } from '../../../adapters/agents/index.js';
import { hookLauncher, launcherProblem, launcherWords, spoolDirOf } from '../../../daemon/cli/hook-launcher.js';
import { tempDir } from '../../support/git.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A PATH directory holding `handoff` as given (a link or a script). */
function pathWith(make: (at: string) => void): string {
  const dir = tempDir('bin');
  dirs.push(dir);
  make(join(dir, 'handoff'));
  return dir;
}

const script = (at: string) => {
  writeFileSync(at, '#!/bin/sh\n');
  chmodSync(at, 0o755);
};

describe('hookLauncher: the hooks start a handoff that exists', () => {
  /** Stands for this install's dist/bin/handoff.js. */
  const entry = (): string => {
    const dir = tempDir('entry');
    dirs.push(dir);
    writeFileSync(join(dir, 'main.js'), '');
    return join(dir, 'main.js');
  };

  it('plain `handoff` when PATH leads to this install (npm link makes a link to the entry)', () => {
    const own = entry();
    chmodSync(own, 0o755);
    const bin = pathWith((at) => symlinkSync(own, at));
    expect(hookLauncher(undefined, { PATH: bin }, own)).toEqual({ command: 'handoff', note: null });
  });

  it('this node and this entry by absolute path, quoted, when handoff is not on PATH, and it says so', () => {
    const own = entry();
    const launcher = hookLauncher(undefined, { PATH: '/nonexistent' }, own);
    expect(launcher.command).toBe(`'${process.execPath}' '${own}'`);
    expect(launcher.note).toContain('`handoff` is not on PATH');
    expect(launcherProblem(`${launcher.command} hook claude-guard`, { PATH: '' })).toBeNull();
  });

  it('another install on PATH is not trusted to be this one', () => {
    const own = entry();
    const bin = pathWith(script);
    const launcher = hookLauncher(undefined, { PATH: bin }, own);
    expect(launcher.command).toContain(own);
    expect(launcher.note).toContain(`another install (${join(bin, 'handoff')})`);
  });

  it('an explicit --command is kept as given, with a warning when it would not start', () => {
    expect(hookLauncher('handoff-nowhere', { PATH: '/nonexistent' })).toEqual({
      command: 'handoff-nowhere',
      note: "--command handoff-nowhere: handoff-nowhere is not on PATH; the agent's hooks will fail until it is",
    });
    expect(hookLauncher(`'${process.execPath}'`, { PATH: '' }).note).toBeNull();
  });
});

describe('launcherProblem: why a written hook command would not start', () => {
  it('the spooling StopFailure line starts no handoff: its own shape is live, an edited one is not read', () => {
    const line = spooledEventCommand("/home/it's me/.local/state/session-handoff/spool");
    expect(launcherProblem(line, { PATH: '' })).toBeNull();
    expect(isOurHook(line, 'claude-event')).toBe(true);
    expect(launcherProblem(line.replace('mv "$t"', 'cp "$t"'), { PATH: '' })).not.toBeNull();
    expect(spoolDirOf(line)).toBe("/home/it's me/.local/state/session-handoff/spool");
    expect(spoolDirOf('handoff hook claude-event')).toBeNull();
  });

  it('reads our quoting back, and stops at `hook`', () => {
    expect(launcherWords(`'/opt/my node' '/a/it'\\''s/main.js' hook claude-guard --state-dir '/s'`)).toEqual(['/opt/my node', "/a/it's/main.js"]);
    expect(launcherWords('handoff hook claude-guard')).toEqual(['handoff']);
    expect(launcherWords('echo $(rm -rf x) hook claude-guard')).toBeNull();
  });

  it('a moved clone, a missing program, an unreadable shape', () => {
    const gone = tempDir('gone');
    dirs.push(gone);
    mkdirSync(join(gone, 'dist'));
    expect(launcherProblem(`'${process.execPath}' '${join(gone, 'dist', 'main.js')}' hook claude-guard`, {})).toBe(
      `${join(gone, 'dist', 'main.js')} does not exist`,
    );
    expect(launcherProblem('handoff hook claude-guard', { PATH: '/nonexistent' })).toBe('handoff is not on PATH');
    expect(launcherProblem('/no/such/node hook claude-guard', {})).toBe('/no/such/node is not an executable file');
    expect(launcherProblem('x=1 handoff hook claude-guard', {})).not.toBeNull();
  });
});
