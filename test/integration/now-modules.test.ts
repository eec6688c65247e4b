import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ownPackage } from '../../daemon/package-root.js';
import { loadedFiles, sourcesOf, tracingArgs } from '../support/bundle-modules.js';
import { tempDir } from '../support/git.js';

/** The sources `handoff now` loads for its command (the module that registers it, its output and its drain wait), from the bundle. */
function sourcesOfNow(): string[] {
  const base = tempDir('now-modules');
  try {
    // `--help` registers and describes the command the way a run does, and ends there.
    const out = execFileSync(process.execPath, [...tracingArgs(base), ownPackage().cli, 'now', '--help'], { encoding: 'utf8' });
    return sourcesOf(loadedFiles(out).modules);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

describe('what `handoff now` loads (docs/performance/evacuation.md)', () => {
  it('follows the drain without the workspace machine: no xstate in the CLI', () => {
    const sources = sourcesOfNow();
    expect(sources).toContain('dist/daemon/cli/drain-wait.js');
    expect(sources).toContain('dist/protocol/status-words.js');
    expect(sources.filter((source) => source.includes('node_modules/xstate/') || source === 'dist/protocol/workspace-machine.js')).toEqual([]);
  });
});
