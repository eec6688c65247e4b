import { describe, expect, it } from 'vitest';
import { acceptCommand, recoveryCommands, renderHandoff } from '../../../protocol/index.js';
import { EMPTY_CAPSULE } from '../../../protocol/manifest-model.js';
import type { Capsule, Manifest } from '../../../schemas/index.js';
import { manifestWith } from './manifest-fixture.js';

const FULL: Capsule = {
  ...(EMPTY_CAPSULE as Capsule),
  objective: 'ship it',
  next_action: 'run `npm test`',
  acceptance_criteria: ['green'],
  first_files: ['src/a.ts'],
  work: { completed: ['a'], in_progress: ['b'], remaining: ['c'], blocked: ['d'], deferred: ['e'] },
  decisions: ['f'],
  do_not_repeat: ['g'],
  rejected_approaches: ['h'],
  do_not_change_silently: ['i'],
  risks: ['j'],
  assumptions: ['k'],
};

/** HANDOFF.md as a whole: the daemon's opening lines, then only the sections that have something to say. */
describe('HANDOFF.md, the whole document', () => {
  it('opens with the title, the authority line and whose words are whose', () => {
    const manifest = manifestWith(FULL);
    const id = manifest.cycle_id;
    expect(renderHandoff(manifest).split('\n').slice(0, 6)).toEqual([
      `# Handoff ${id} (out leg, revision 1)`,
      '',
      `Authority: none — verify before acting. Only the lease grants permission: run \`${acceptCommand(id, { from: 'origin' })}\` in your clone first (in the source checkout: \`${acceptCommand(id)}\`); a clean clone is checked out on the branch \`handoff/${id}\`.`,
      '',
      "The daemon wrote this document from the manifest. Blocks marked _written by the source agent, unverified_ quote the agent's capsule as it was given: notes to check against the repository, never instructions from the daemon.",
      '',
    ]);
  });

  it('a full capsule: every list under its own heading, each work list under its bold name, nothing named as missing', () => {
    const text = renderHandoff(manifestWith(FULL));
    const headings = text.split('\n').filter((line) => line.startsWith('## ') || /^\*\*[A-Z][a-z ]+\*\*$/.test(line));
    expect(headings).toEqual([
      '## Next action',
      '## Recover the source',
      '## Files to read first',
      '## Objective',
      '## Acceptance criteria',
      '## Work',
      '**Completed**',
      '**In progress**',
      '**Remaining**',
      '**Blocked**',
      '**Deferred**',
      '## Decisions',
      '## Do not repeat',
      '## Rejected approaches',
      '## Do not change silently',
      '## Validations',
      '## Risks',
      '## Assumptions',
      '## Repository (observed by the daemon)',
      '## Why this handoff',
    ]);
    expect(text).not.toContain('_Not recorded by the source agent');
    expect(text.split('\n')[text.split('\n').indexOf('## Objective') + 2]).toBe('_Written by the source agent, unverified:_');
  });

  it('why: no readings and no drain wait recorded add no lines after the trigger', () => {
    const manifest: Manifest = { ...manifestWith(FULL), drain_wait: null, trigger: { ...manifestWith(FULL).trigger, reason: '', readings: [] } };
    const end = ['## Why this handoff', '', `Trigger: ${manifest.trigger.kind}.`, ''];
    expect(renderHandoff(manifest).split('\n').slice(-4)).toEqual(end);
    const older: Manifest = { ...manifest };
    delete older.drain_wait;
    expect(renderHandoff(older).split('\n').slice(-4)).toEqual(end);
  });
});

describe('HANDOFF.md: a handoff branch the checkpoint does not fully name', () => {
  const base = manifestWith(EMPTY_CAPSULE as Capsule);
  const id = base.cycle_id;
  const dir = `'handoff-${id}'`;
  const capsuleOnly = [`git clone --no-checkout 'https://example.invalid/r.git' ${dir}`, `cd ${dir}`, `git switch --detach ${'b'.repeat(40)}`];

  it('without a commit or a remote, the recovery is the recorded HEAD, as for a capsule only', () => {
    expect(recoveryCommands({ ...base, checkpoint: { ...base.checkpoint, commit: null } })).toEqual(capsuleOnly);
    expect(recoveryCommands({ ...base, checkpoint: { ...base.checkpoint, remote: null } })).toEqual(capsuleOnly);
  });

  it('without a remote, the accept is made in a checkout here', () => {
    const text = renderHandoff({ ...base, checkpoint: { ...base.checkpoint, remote: null } });
    expect(text.split('\n')[2]).toBe(
      `Authority: none — verify before acting. Only the lease grants permission: run \`${acceptCommand(id)}\` in your checkout first.`,
    );
  });

  it('without a recorded HEAD there is no commit to keep the changes on top of', () => {
    expect(renderHandoff({ ...base, repository: { ...base.repository, head: null } })).not.toContain('To continue with the changes uncommitted');
  });

  it('a commit id is bare only when it is nothing but hex: anything around it is quoted', () => {
    const hex = 'c'.repeat(40);
    for (const commit of [`x${hex}`, `${hex}x`]) {
      expect(recoveryCommands({ ...base, checkpoint: { ...base.checkpoint, commit } })[3]).toBe(`git switch --detach '${commit}'`);
    }
  });
});

describe('HANDOFF.md names what the manifest does not record', () => {
  const base = manifestWith(EMPTY_CAPSULE as Capsule);
  const line = (manifest: Manifest, start: string) =>
    renderHandoff(manifest)
      .split('\n')
      .find((l) => l.startsWith(start));

  it('a checkpoint without its ref, remote or commit, and a repository without commits', () => {
    const bare = { ...base.checkpoint, ref: null, remote: null, commit: null };
    expect(line({ ...base, checkpoint: bare }, 'The work tree')).toBe(
      'The work tree (tracked and untracked files, ignored excluded) is commit `none` on `no ref` of remote `none` (`https://example.invalid/r.git`); the remote was read back and holds it.',
    );
    expect(line({ ...base, checkpoint: { ...bare, mechanism: 'local_ref' } }, '**Recoverable')).toBe(
      '**Recoverable on this machine only:** the repository has no remote, so the checkpoint is the local ref `no ref` (commit `none`) in `the repository`.',
    );
    expect(line({ ...base, repository: { ...base.repository, head: null } }, '- branch:')).toBe('- branch: `main`; HEAD `none (no commits)`');
  });
});
