import { describe, expect, it } from 'vitest';
import { checkedOutBranches, cycleOfRef, deleteLocalRefs, deleteRemoteRefs, localHandoffRefs, remoteHandoffRefs } from '../../../daemon/git/prune-refs.js';
import { git, tempDir, tempRepo } from '../../support/git.js';

const A = '20261129T081500Z-k3f7qa';
const B = '20261130T090000Z-abcdef';
const REFS = (cycle: string) => [
  `refs/heads/handoff/${cycle}`,
  `refs/heads/handoff/${cycle}-return`,
  `refs/handoff/lease/${cycle}`,
  `refs/handoff/packages/${cycle}`,
];

/** A clone whose two cycles left every handoff ref locally and on a bare remote, plus refs that are not ours. */
function withCycles(): { repo: string; remote: string; head: string } {
  const remote = tempDir('prune-remote');
  git(remote, 'init', '-q', '--bare');
  const repo = tempRepo();
  git(repo, 'remote', 'add', 'origin', remote);
  const head = git(repo, 'rev-parse', 'HEAD');
  for (const ref of [...REFS(A), ...REFS(B), 'refs/heads/handoff/not-a-cycle', 'refs/handoff/lease/nope', 'refs/heads/feature'])
    git(repo, 'update-ref', ref, head);
  git(repo, 'push', '-q', 'origin', 'refs/heads/*:refs/heads/*', 'refs/handoff/*:refs/handoff/*');
  return { repo, remote, head };
}

describe('prune refs: only handoff refs of valid cycles', () => {
  it('names the cycle of branches, return legs and records refs; anything else is not ours', () => {
    expect(cycleOfRef(`refs/heads/handoff/${A}`)).toBe(A);
    expect(cycleOfRef(`refs/heads/handoff/${A}-return`)).toBe(A);
    expect(cycleOfRef(`refs/handoff/packages/${A}`)).toBe(A);
    expect(cycleOfRef('refs/heads/handoff/not-a-cycle')).toBeNull();
    expect(cycleOfRef(`refs/heads/feature/${A}`)).toBeNull();
    expect(cycleOfRef(`refs/tags/handoff/${A}`)).toBeNull();
  });

  it('lists local and remote handoff refs alike, and deletes them with their old value', async () => {
    const { repo, remote, head } = withCycles();
    const local = await localHandoffRefs(repo);
    expect(local.map((r) => r.ref).sort()).toEqual([...REFS(A), ...REFS(B)].sort());
    expect(local.every((r) => r.commit === head)).toBe(true);
    const onRemote = await remoteHandoffRefs(repo, 'origin', 10_000);
    expect(onRemote.map((r) => r.ref).sort()).toEqual([...REFS(A), ...REFS(B)].sort());

    const ofA = local.filter((r) => r.cycle === A);
    expect((await deleteLocalRefs(repo, ofA)).deleted).toHaveLength(4);
    await deleteRemoteRefs(
      repo,
      'origin',
      onRemote.filter((r) => r.cycle === A),
      10_000,
    );
    expect((await localHandoffRefs(repo)).map((r) => r.cycle)).toEqual([B, B, B, B]);
    expect((await remoteHandoffRefs(repo, 'origin', 10_000)).map((r) => r.cycle)).toEqual([B, B, B, B]);
    // Not ours: left where they were, on both sides.
    expect(
      git(remote, 'for-each-ref', '--format=%(refname)', 'refs/heads/handoff/not-a-cycle', 'refs/handoff/lease/nope', 'refs/heads/feature').split('\n'),
    ).toHaveLength(3);
    expect(git(repo, 'rev-parse', 'refs/heads/feature')).toBe(head);
  });

  it('an unknown remote is a usage error, and nothing is deleted', async () => {
    const { repo } = withCycles();
    await expect(remoteHandoffRefs(repo, 'nowhere', 10_000)).rejects.toMatchObject({ code: 'usage_error' });
    expect(await localHandoffRefs(repo)).toHaveLength(8);
  });

  it('a ref that moved since it was read is not deleted', async () => {
    const { repo, head } = withCycles();
    const first = (await localHandoffRefs(repo))[0];
    if (first === undefined) throw new Error('no handoff ref listed');
    git(repo, 'commit', '-q', '--allow-empty', '-m', 'moved');
    git(repo, 'update-ref', first.ref, git(repo, 'rev-parse', 'HEAD'), head);
    const result = await deleteLocalRefs(repo, [first]);
    expect(result.deleted).toEqual([]);
    expect(result.failed.map((f) => f.ref.ref)).toEqual([first.ref]);
    expect(git(repo, 'rev-parse', first.ref)).not.toBe(head);
  });

  it('knows the branches checked out in every worktree', async () => {
    const { repo } = withCycles();
    const other = tempDir('prune-wt');
    git(repo, 'worktree', 'add', '-q', other, `handoff/${A}`);
    expect(await checkedOutBranches(repo)).toEqual(new Set(['refs/heads/main', `refs/heads/handoff/${A}`]));
  });
});
