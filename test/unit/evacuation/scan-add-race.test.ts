import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemMonotonic } from '../../../daemon/clock.js';
import { parseConfig } from '../../../daemon/config.js';
import { openVerdictCache } from '../../../daemon/evacuation/scan-verdicts.js';
import { secretlintFingerprint } from '../../../daemon/evacuation/secret-scan.js';
import { createStepStore } from '../../../daemon/evacuation/step-store.js';
import { createSteps, type DrainTarget } from '../../../daemon/evacuation/steps.js';
import type { Cycle, DrainProgress, WorkspaceContext } from '../../../protocol/index.js';
import { git, tempDir, tempRepo } from '../../support/git.js';
import { plantedSecrets } from '../../support/secrets.js';

const REF = 'refs/heads/handoff/c-race';

/**
 * The inspect and snapshot steps with real git, as a drain runs them: `afterInspect` writes between
 * inspect's listing (which the scan starts from) and the snapshot step, `afterScan` between the scan
 * and the snapshot's `add`, where an agent's write races the drain.
 */
async function snapshotWith(root: string, afterScan: () => Promise<void>, afterInspect: () => Promise<void> = async () => undefined) {
  const stateDir = tempDir('race-state-');
  const steps = createSteps({
    config: parseConfig({}, 'test'),
    clock: { now: () => Date.parse('2026-01-01T00:00:00Z') },
    monotonic: systemMonotonic,
    store: createStepStore(stateDir),
    verdicts: () => openVerdictCache(stateDir, secretlintFingerprint()),
    afterScan,
  });
  const drain = { leg: 'out', revision: 0, revision_at: '2026-01-01T00:00:00Z', previous_commit: null, steps: {} } as unknown as DrainProgress;
  const target = { home: root, work: root, context: {} as WorkspaceContext, cycle: { id: 'c-race' } as Cycle, drain } satisfies DrainTarget;
  const inspected = await steps.inspect(target);
  if (inspected.kind !== 'done') throw new Error('expected inspect to finish');
  await afterInspect();
  const outcome = await steps.snapshot({ ...target, drain: { ...drain, steps: { inspect: inspected.record } } });
  if (outcome.kind !== 'done') throw new Error('expected the snapshot to finish');
  // What a push would carry: the snapshot ref in a bare remote, searched there.
  const bare = tempDir('race-bare-');
  git(bare, 'init', '-q', '--bare');
  git(root, 'push', '-q', bare, `${REF}:${REF}`);
  return { summary: outcome.record.summary, bare };
}

function repo() {
  const root = tempRepo();
  writeFileSync(join(root, 'notes.md'), 'plain notes\n');
  git(root, 'add', '.');
  git(root, 'commit', '-q', '-m', 'notes');
  return root;
}

describe('a file written between the secret scan and the snapshot add', () => {
  it('a file rewritten with a secret after the scan keeps its committed content and is named withheld', async () => {
    const root = repo();
    const { githubToken } = plantedSecrets();
    writeFileSync(join(root, 'notes.md'), 'plain notes, edited\n');
    const { summary, bare } = await snapshotWith(root, async () => {
      writeFileSync(join(root, 'notes.md'), `token = "${githubToken}"\n`);
    });
    expect(summary['withheld']).toBe(1);
    expect(summary['withheld_paths']).toContain('notes.md (@secretlint/secretlint-rule-github)');
    expect(git(bare, 'cat-file', 'blob', `${REF}:notes.md`)).toBe('plain notes');
    expect(() => git(bare, 'grep', '-q', githubToken, REF)).toThrow();
    // The user's index and file are untouched.
    expect(git(root, 'diff', '--cached', '--name-only')).toBe('');
  });

  it('a file that appears after the scan with a secret is left out and named withheld', async () => {
    const root = repo();
    const secrets = plantedSecrets();
    writeFileSync(join(root, 'clean.txt'), 'nothing here\n');
    const { summary, bare } = await snapshotWith(root, async () => {
      writeFileSync(join(root, 'late.env'), secrets.env);
    });
    expect(summary['withheld_paths']).toContain('late.env (@secretlint/secretlint-rule-aws)');
    const pushed = git(bare, 'ls-tree', '--name-only', REF).split('\n');
    expect(pushed).toContain('clean.txt');
    expect(pushed).not.toContain('late.env');
    expect(() => git(bare, 'grep', '-q', secrets.awsSecret, REF)).toThrow();
  });

  it('a file that appears with a secret after inspect listed the changes is scanned all the same', async () => {
    const root = repo();
    const secrets = plantedSecrets();
    writeFileSync(join(root, 'listed.txt'), 'listed by inspect\n');
    const { summary, bare } = await snapshotWith(
      root,
      async () => undefined,
      async () => {
        writeFileSync(join(root, 'unlisted.env'), secrets.env);
        writeFileSync(join(root, 'notes.md'), `token = "${secrets.githubToken}"\n`);
      },
    );
    expect(summary['withheld_paths']).toContain('unlisted.env (@secretlint/secretlint-rule-aws)');
    expect(summary['withheld_paths']).toContain('notes.md (@secretlint/secretlint-rule-github)');
    const pushed = git(bare, 'ls-tree', '--name-only', REF).split('\n');
    expect(pushed).toContain('listed.txt');
    expect(pushed).not.toContain('unlisted.env');
    expect(git(bare, 'cat-file', 'blob', `${REF}:notes.md`)).toBe('plain notes');
    expect(() => git(bare, 'grep', '-q', secrets.githubToken, REF)).toThrow();
  });

  it('a secret a clean filter puts into the stored bytes is found there, where the work tree has none', async () => {
    const root = repo();
    const { githubToken } = plantedSecrets();
    git(root, 'config', 'filter.inject.clean', `sed s/PLACEHOLDER/${githubToken}/`);
    writeFileSync(join(root, '.gitattributes'), 'notes.md filter=inject\n');
    writeFileSync(join(root, 'notes.md'), 'token = "PLACEHOLDER"\n');
    const { summary, bare } = await snapshotWith(root, async () => undefined);
    expect(summary['withheld_paths']).toContain('notes.md (@secretlint/secretlint-rule-github)');
    expect(git(bare, 'cat-file', 'blob', `${REF}:notes.md`)).toBe('plain notes');
  });

  it('a clean file changed after the scan is scanned from the staged bytes and pushed', async () => {
    const root = repo();
    const { summary, bare } = await snapshotWith(root, async () => {
      writeFileSync(join(root, 'notes.md'), 'rewritten, still clean\n');
    });
    expect(summary['withheld']).toBe(0);
    expect(git(bare, 'cat-file', 'blob', `${REF}:notes.md`)).toBe('rewritten, still clean');
  });
});
