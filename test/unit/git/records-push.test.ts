import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commitFiles, pushRecordsRef } from '../../../daemon/git/records-ref.js';
import { git, tempDir, tempRepo } from '../../support/git.js';

const REF = 'refs/handoff/lease/c-1';
const AT = '2026-01-01T00:00:00Z';

/** A clone with a bare remote, and a first record already on REF there. */
async function withRecord(): Promise<{ repo: string; remote: string; first: string }> {
  const remote = tempDir('records-remote');
  git(remote, 'init', '-q', '--bare');
  const repo = tempRepo();
  git(repo, 'remote', 'add', 'origin', remote);
  const first = await commitFiles(repo, { 'lease.json': '{"n":1}\n' }, null, 'first', AT);
  expect(await pushRecordsRef(repo, 'origin', first, REF, 10_000)).toEqual({ ok: true });
  return { repo, remote, first };
}

describe('pushRecordsRef: why a refused push was refused', () => {
  it("a push that is not a child of the remote's record is rejected, and says so (not git's closing 'Done')", async () => {
    const { repo } = await withRecord();
    const stranger = await commitFiles(repo, { 'lease.json': '{"n":2}\n' }, null, 'not a child', AT);
    const pushed = await pushRecordsRef(repo, 'origin', stranger, REF, 10_000);
    expect(pushed).toMatchObject({ ok: false, rejected: true });
    expect(pushed.ok || pushed.why).toMatch(/rejected|non-fast-forward|fetch first/);
    expect(pushed.ok || pushed.why).not.toBe('Done');
  });

  it("a remote's policy that declines the push is named, and told from a lost race (refused, not rejected)", async () => {
    const { repo, remote, first } = await withRecord();
    const hook = join(remote, 'hooks', 'pre-receive');
    writeFileSync(hook, '#!/bin/sh\necho "records are frozen here" >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    const child = await commitFiles(repo, { 'lease.json': '{"n":2}\n' }, first, 'child', AT);
    const pushed = await pushRecordsRef(repo, 'origin', child, REF, 10_000);
    expect(pushed).toMatchObject({ ok: false, rejected: false, refused: true });
    expect(pushed.ok || pushed.why).toMatch(/pre-receive hook declined.*records are frozen here/);
  });
});
