import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { PauseInfo } from '../../protocol/index.js';
import { systemClock } from '../../daemon/clock.js';
import { createLogger } from '../../daemon/logger.js';
import { WorkspaceFilesWatcher, type WatchTarget } from '../../daemon/workspace-files-watch.js';
import { tempDir } from '../support/git.js';

const silent = createLogger(new Writable({ write: (_chunk, _encoding, done) => done() }), 'silent');

/**
 * The target records what reached it, in order; the first pause it is handed waits until the test
 * lets it go — the moment a slow watcher read sits between `handoff unpause`'s rm and its answer.
 */
function holdingTarget() {
  const applied: (PauseInfo | null)[] = [];
  let release: () => void = () => undefined;
  let reached: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const entered = new Promise<void>((resolve) => (reached = resolve));
  let first = true;
  const target: WatchTarget = {
    async setPause(_scope, _root, pause) {
      if (first) {
        first = false;
        reached();
        await held;
      }
      applied.push(pause);
    },
    capsuleChanged: async () => undefined,
  };
  return { target, applied, entered, release: () => release() };
}

describe('the PAUSE switch: file events and pause commands in one order', () => {
  it('a watcher read that raced an unpause is applied before the unpause, so the workspace ends unpaused', async () => {
    const stateDir = tempDir('files-watch');
    const root = tempDir('files-watch-repo');
    const pauseFile = join(root, '.session-handoff', 'PAUSE');
    mkdirSync(join(root, '.session-handoff'));
    writeFileSync(pauseFile, 'stop\n');
    const { target, applied, entered, release } = holdingTarget();
    const watcher = new WorkspaceFilesWatcher(stateDir, target, systemClock, silent);
    // The watcher saw the file and read it (a pause); its apply is held up …
    const racing = watcher.applyPauseFile(pauseFile);
    await entered;
    // … while `handoff unpause` removes the file and applies through the same queue.
    rmSync(pauseFile);
    const unpause = watcher.applyPauseFile(pauseFile);
    release();
    await Promise.all([racing, unpause]);
    expect(applied.map((pause) => pause?.reason ?? null)).toEqual(['stop', null]);
    await watcher.close();
  });

  it("a command's change that cannot be applied fails for the command, and the queue goes on", async () => {
    const stateDir = tempDir('files-watch');
    const failing: WatchTarget = {
      setPause: async () => {
        throw new Error('journal full');
      },
      capsuleChanged: async () => undefined,
    };
    const watcher = new WorkspaceFilesWatcher(stateDir, failing, systemClock, silent);
    await expect(watcher.applyPauseFile(join(stateDir, 'PAUSE'))).rejects.toThrow('journal full');
    await expect(watcher.idle()).resolves.toBeUndefined();
    await watcher.close();
  });
});
