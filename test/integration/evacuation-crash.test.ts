import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DRAIN_STEPS } from '../../protocol/index.js';
import type { Manifest } from '../../schemas/index.js';
import { cli, exited, startDaemon } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { busyRepo, userState } from '../support/scenario.js';

describe('kill -9 during the drain', () => {
  it.each(DRAIN_STEPS)('after the %s step: check says 1, resume finishes, one ref, one manifest, one push', async (step) => {
    const stateDir = tempDir('state');
    const { root, remote } = busyRepo();
    const before = userState(root);
    const doomed = await startDaemon(stateDir, { HANDOFF_TEST_KILL_AFTER_STEP: step });
    const now = await cli(stateDir, ['now', '--no-wait', '--json'], root);
    await exited(doomed.child);
    expect(doomed.child.signalCode).toBe('SIGKILL');
    expect(now.code).toBe(69);

    // Restart paused, so the drain cannot finish on its own before `handoff check` looks.
    writeFileSync(join(stateDir, 'PAUSE'), 'inspecting the crash\n');
    const daemon = await startDaemon(stateDir);
    try {
      const check = await cli(stateDir, ['check', '--json'], root);
      expect(check.code).toBe(1);
      expect(String(check.json.data?.['blocked'])).toMatch(/paused before/);
      rmSync(join(stateDir, 'PAUSE'));
      await cli(stateDir, ['unpause', '--global', '--json'], root);
      const resumed = await cli(stateDir, ['resume', '--json'], root);
      expect(resumed.json.code).toBe('handoff_ready');
      const cycle = (resumed.json.data?.['cycle'] as { id: string }).id;

      expect(git(root, 'for-each-ref', '--format=%(refname)', 'refs/heads/handoff/').split('\n')).toEqual([`refs/heads/handoff/${cycle}`]);
      expect(git(remote, 'for-each-ref', '--format=%(refname)', 'refs/heads/handoff/').split('\n')).toEqual([`refs/heads/handoff/${cycle}`]);
      // The bare remote logs every update of the ref: exactly one push reached it.
      expect(git(remote, 'reflog', 'show', '--format=%H', `refs/heads/handoff/${cycle}`).split('\n')).toHaveLength(1);
      const files = readdirSync(join(root, '.session-handoff', cycle)).sort();
      expect(files).toEqual(['HANDOFF.md', 'manifest.json']);
      const manifest = JSON.parse(readFileSync(join(root, '.session-handoff', cycle, 'manifest.json'), 'utf8')) as Manifest;
      const handoff = readFileSync(join(root, '.session-handoff', cycle, 'HANDOFF.md'));
      expect(manifest.integrity.artifacts[0]?.sha256).toBe(createHash('sha256').update(handoff).digest('hex'));
      expect(manifest.checkpoint.commit).toBe(git(remote, 'rev-parse', `refs/heads/handoff/${cycle}`));
      const after = userState(root);
      expect(after).toEqual(before);
    } finally {
      await daemon.stop();
    }
  });
});
