import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManifestSchema, type Manifest } from '../../schemas/index.js';
import { createAjv } from '../../daemon/schema-check.js';
import { cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { busyRepo, commitBlobs, hook, userState, workTreeBlobs } from '../support/scenario.js';

let daemon: DaemonProcess;
beforeAll(async () => {
  daemon = await startDaemon();
});
afterAll(async () => {
  await daemon.stop();
});

const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

function readPackage(root: string, cycle: string, manifestFile = 'manifest.json') {
  const manifestText = readFileSync(join(root, '.session-handoff', cycle, manifestFile), 'utf8');
  const manifest = JSON.parse(manifestText) as Manifest;
  const handoffPath = manifest.integrity.artifacts[0]?.path ?? 'HANDOFF.md';
  return { manifest, manifestText, handoff: readFileSync(join(root, '.session-handoff', cycle, handoffPath), 'utf8') };
}

describe('handoff now on a busy repository with a bare remote', () => {
  it('reaches HANDOFF_READY; the remote branch holds the whole work tree; nothing of the user changed', async () => {
    const { root, remote } = busyRepo();
    const capsule = {
      objective: 'Make the counter configurable',
      acceptance_criteria: ['npm test passes'],
      work: { completed: ['parsed the flag'], in_progress: ['src/app.ts default'], remaining: ['docs'] },
      decisions: ['keep the default at 3'],
      do_not_repeat: ['do not bump the major version'],
      first_files: ['src/app.ts'],
      next_action: 'Run `npm test` and fix src/app.ts if the default test fails',
    };
    const capsuleFile = join(tempDir('capsule'), 'capsule.json');
    writeFileSync(capsuleFile, JSON.stringify(capsule));
    expect((await cli(daemon.stateDir, ['capsule', 'set', '--file', capsuleFile, '--json'], root)).json.code).toBe('capsule_saved');

    const remoteRefs = () => git(remote, 'for-each-ref', '--format=%(refname) %(objectname)').split('\n');
    const remoteBefore = remoteRefs();
    const before = userState(root);
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--reason', 'laptop battery', '--json'], root);
    expect(now.code).toBe(0);
    expect(now.json.code).toBe('handoff_ready');
    const cycle = (now.json.data?.['cycle'] as { id: string }).id;

    expect(userState(root)).toEqual(before);
    // Only the daemon's namespaces are new: the checkpoint branch and the travelling records.
    const daemonRef = (r: string) => r.startsWith('refs/heads/handoff/') || r.startsWith('refs/handoff/');
    expect(remoteRefs().filter((r) => !daemonRef(r))).toEqual(remoteBefore);
    expect(
      remoteRefs()
        .filter((r) => r.startsWith('refs/handoff/'))
        .map((r) => r.split(' ')[0]),
    ).toEqual([`refs/handoff/lease/${cycle}`, `refs/handoff/packages/${cycle}`]);
    expect(
      remoteRefs()
        .filter((r) => r.startsWith('refs/heads/handoff/'))
        .map((r) => r.split(' ')[0]),
    ).toEqual([`refs/heads/handoff/${cycle}`]);

    const commit = git(remote, 'rev-parse', `refs/heads/handoff/${cycle}`);
    const blobs = workTreeBlobs(root);
    expect(Object.keys(blobs)).toEqual(expect.arrayContaining(['notes.md', 'src/app.ts', 'src/staged.ts', '.gitignore']));
    expect(Object.keys(blobs)).not.toContain('debug.log');
    expect(commitBlobs(remote, commit)).toEqual(blobs);
    expect(git(remote, 'rev-parse', `${commit}^`)).toBe(git(root, 'rev-parse', 'HEAD'));

    const { manifest, manifestText, handoff } = readPackage(root, cycle);
    const validate = createAjv().compile(ManifestSchema);
    expect(validate(JSON.parse(manifestText)), JSON.stringify(validate.errors)).toBe(true);
    expect(manifest.integrity.artifacts).toEqual([{ path: 'HANDOFF.md', sha256: sha256(handoff) }]);
    expect(manifest).toMatchObject({
      cycle_id: cycle,
      leg: 'out',
      authority: 'none',
      predecessor: null,
      trigger: { kind: 'manual', reason: 'laptop battery' },
      capsule_source: 'agent',
      capsule: { objective: 'Make the counter configurable', next_action: capsule.next_action },
      checkpoint: { mechanism: 'handoff_branch', commit, ref: `refs/heads/handoff/${cycle}`, remote: 'origin', remote_verified: true },
      repository: {
        branch: 'main',
        upstream: 'origin/main',
        ahead: 0,
        behind: 0,
        operation_in_progress: null,
        dirty: { staged: ['src/app.ts', 'src/staged.ts'], unstaged: ['src/app.ts'], untracked: ['notes.md'] },
        instructions: [{ path: 'AGENTS.md', sha256: sha256(readFileSync(join(root, 'AGENTS.md'))) }],
      },
      validations: [{ status: 'not_run', command: null }],
    });
    expect(manifest.repository.root_commit).toBe(git(root, 'rev-list', '--max-parents=0', 'HEAD'));
    expect(manifest.repository.remote_url).toBe(remote);

    // Scan-first: the authority line, then the one next action, quoted as the agent wrote it.
    const firstLines = handoff.split('\n').filter(Boolean);
    expect(firstLines[1]).toMatch(/^Authority: none — verify before acting/);
    expect(firstLines.slice(3, 7)).toEqual(['## Next action', '_Written by the source agent, unverified:_', '```text', capsule.next_action]);
    expect(handoff).toContain('do not bump the major version');
    expect(handoff).toContain('NOT_RUN');

    // The recovery commands, run as written in an empty directory, give the same tree.
    const block = /## Recover the source[\s\S]*?```sh\n([\s\S]*?)```/.exec(handoff)?.[1] ?? '';
    const elsewhere = tempDir('receiver');
    execFileSync('sh', ['-e', '-c', block], { cwd: elsewhere, stdio: 'pipe' });
    const clone = join(elsewhere, `handoff-${cycle}`);
    expect(workTreeBlobs(clone)).toEqual(blobs);

    const status = await cli(daemon.stateDir, ['status', '--json'], root);
    expect(status.json.data).toMatchObject({ state: 'HANDOFF_READY', blocked: null, lease: { offered: true } });
    expect((await cli(daemon.stateDir, ['check', '--json'], root)).code).toBe(2);
    // The snapshot's scratch index, kept for the offer's re-check, is gone once the offer is made.
    expect(readdirSync(join(daemon.stateDir, 'drains', cycle)).filter((name) => name.endsWith('.index'))).toEqual([]);
  });

  it('with no remote it evacuates to a local ref and says the work is recoverable on this machine only', async () => {
    const root = tempDir('lonely');
    git(root, 'init', '-q', '-b', 'main');
    writeFileSync(join(root, 'a.txt'), 'one\n');
    git(root, 'add', '.');
    git(root, 'commit', '-q', '-m', 'one');
    writeFileSync(join(root, 'a.txt'), 'two\n');
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code).toBe('handoff_ready');
    const cycle = (now.json.data?.['cycle'] as { id: string }).id;
    const { manifest, handoff } = readPackage(root, cycle);
    expect(manifest.checkpoint).toMatchObject({ mechanism: 'local_ref', remote_verified: false, remote: root });
    expect(manifest.capsule_source).toBe('missing');
    expect(handoff).toContain('Recoverable on this machine only');
    expect(handoff).toMatch(/## Next action\n\n_No capsule was written/);
    expect(git(root, 'show', `refs/heads/handoff/${cycle}:a.txt`)).toBe('two');
  });

  it('a detached HEAD and a rebase in progress still evacuate, and the manifest says so', async () => {
    const { root } = busyRepo();
    git(root, 'stash', 'push', '-q', '--include-untracked', '-m', 'clear the tree for the rebase');
    writeFileSync(join(root, 'src', 'app.ts'), 'export const a = 10;\n');
    git(root, 'commit', '-q', '-am', 'ten');
    git(root, 'checkout', '-q', 'feature');
    writeFileSync(join(root, 'src', 'app.ts'), 'export const a = 20;\n');
    git(root, 'commit', '-q', '-am', 'twenty');
    expect(() => git(root, 'rebase', 'main')).toThrow();
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code).toBe('handoff_ready');
    const cycle = (now.json.data?.['cycle'] as { id: string }).id;
    const { manifest } = readPackage(root, cycle);
    expect(manifest.repository).toMatchObject({ branch: null, operation_in_progress: 'rebase' });
    expect(existsRebase(root)).toBe(true);

    const detached = busyRepo().root;
    git(detached, 'checkout', '-q', '--detach');
    const second = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], detached);
    expect(second.json.code).toBe('handoff_ready');
    const id = (second.json.data?.['cycle'] as { id: string }).id;
    expect(readPackage(detached, id).manifest.repository).toMatchObject({ branch: null, head: git(detached, 'rev-parse', 'HEAD') });
  });

  it('an agent edit after the snapshot is captured in a second revision chained by predecessor', async () => {
    const { root, remote } = busyRepo();
    // The remote's pre-receive hook plays the agent that keeps typing: it edits the work tree once,
    // mid-publish (the daemon runs none of the repository's own hooks).
    hook(remote, 'pre-receive', `[ -f '${root}/.git/edited' ] || { echo late >> '${root}/notes.md'; touch '${root}/.git/edited'; }`);
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
    expect(now.json.code).toBe('handoff_ready');
    const cycle = now.json.data?.['cycle'] as { id: string; drain: { revision: number } };
    expect(cycle.drain.revision).toBe(2);
    const first = readPackage(root, cycle.id);
    const second = readPackage(root, cycle.id, 'manifest.2.json');
    expect(second.manifest.revision).toBe(2);
    expect(second.manifest.predecessor).toBe(sha256(first.manifestText));
    expect(second.manifest.integrity.artifacts[0]?.path).toBe('HANDOFF.2.md');
    const commit = git(remote, 'rev-parse', `refs/heads/handoff/${cycle.id}`);
    expect(second.manifest.checkpoint.commit).toBe(commit);
    expect(git(remote, 'rev-parse', `${commit}^`)).toBe(first.manifest.checkpoint.commit);
    expect(commitBlobs(remote, commit)).toEqual(workTreeBlobs(root));
    expect(git(remote, 'show', `${commit}:notes.md`)).toBe('untracked notes\nlate');
  });
});

function existsRebase(root: string): boolean {
  try {
    readFileSync(join(root, '.git', 'rebase-merge', 'head-name'));
    return true;
  } catch {
    return false;
  }
}
