import { chmodSync, readFileSync, writeFileSync, appendFileSync, existsSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, startDaemon, until, sharedDaemon } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { commitBlobs, twoClones, userState, workTreeBlobs } from '../support/scenario.js';

const shared = sharedDaemon();
const run = shared.run;
const stateOf = async (repo: string) => String((await run(['status'], repo)).json.data?.['state']);

async function evacuate(a: string): Promise<string> {
  writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
  writeFileSync(join(a, 'notes.md'), 'source notes\n');
  const now = await run(['now', '--no-wait'], a);
  expect(now.json.code).toBe('handoff_ready');
  return (now.json.data?.['cycle'] as { id: string }).id;
}

describe('the whole path across two clones of one remote', () => {
  it('NORMAL → EVACUATE → HANDOFF_READY → TAKEOVER → RETURN_HANDOFF_READY → CLOSED, and A gets B’s returned tree', async () => {
    const { a, b, remote } = twoClones();
    const seen = [await stateOf(a)];
    expect((await run(['lease', 'acquire', '--as', 'primary'], a)).json.data?.['token']).toBe(1);
    writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
    writeFileSync(join(a, 'notes.md'), 'source notes\n');
    // An agent session at work (its status line named it a moment ago), so `handoff now` waits for its
    // `handoff drained` and EVACUATE is visible meanwhile (with no agent seen the drain starts at once).
    const session = ['signal', '--source', 'claude-statusline', '--metric', 'context', '--used-percent', '10', '--executor', 'session-1'];
    expect((await run(session, a)).code).toBe(0);
    const nowRun = run(['now', '--reason', 'battery'], a);
    seen.push(await until('EVACUATE', async () => ((await stateOf(a)) === 'EVACUATE' ? 'EVACUATE' : undefined)));
    expect((await run(['drained'], a)).code).toBe(0);
    const now = await nowRun;
    expect(now.json.code).toBe('handoff_ready');
    const cycle = (now.json.data?.['cycle'] as { id: string }).id;
    seen.push(await stateOf(a));

    const accepted = await run(['accept', cycle, '--as', 'emergency', '--checkout'], b);
    expect(accepted.code).toBe(0);
    expect(accepted.json).toMatchObject({ code: 'accepted', data: { token: 2, state: 'TAKEOVER' } });
    seen.push(await stateOf(a));
    expect((await run(['status'], b)).json.data?.['receiving']).toMatchObject({ cycle, home: a, holder: { executor: 'emergency', token: 2 } });
    // The frozen source's old token is refused from now on.
    expect((await run(['lease', 'renew', '--token', '1'], a)).code).toBe(77);
    expect((await run(['lease', 'release', '--token', '1'], a)).code).toBe(77);

    // B works: it has exactly the source's tree, changes it, and hands back.
    expect(readFileSync(join(b, 'notes.md'), 'utf8')).toBe('source notes\n');
    appendFileSync(join(b, 'f.txt'), 'three\n');
    rmSync(join(b, 'notes.md'));
    writeFileSync(join(b, 'done.md'), 'finished by B\n');
    const returned = await run(['return', '--no-wait'], b);
    expect(returned.json.code).toBe('handoff_ready');
    seen.push(await stateOf(a));
    const returnCommit = git(remote, 'rev-parse', `refs/heads/handoff/${cycle}-return`);
    expect(commitBlobs(remote, returnCommit)).toEqual(workTreeBlobs(b));

    const back = await run(['accept', cycle, '--return', '--as', 'primary', '--checkout'], a);
    expect(back.json).toMatchObject({ code: 'accepted', data: { state: 'CLOSED', token: 3 } });
    seen.push(await stateOf(a));
    expect(seen).toEqual(['NORMAL', 'EVACUATE', 'HANDOFF_READY', 'TAKEOVER', 'RETURN_HANDOFF_READY', 'CLOSED']);
    expect(workTreeBlobs(a)).toEqual(workTreeBlobs(b));
    expect(git(a, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');

    // The return HANDOFF.md's commands bring any checkout to the returned tree.
    const handoff = readFileSync(join(a, '.session-handoff', cycle, 'return', 'HANDOFF.md'), 'utf8');
    const block = /## Recover the source[\s\S]*?```sh\n([\s\S]*?)```/.exec(handoff)?.[1] ?? '';
    const elsewhere = tempDir('reviewer');
    execFileSync('sh', ['-e', '-c', block], { cwd: elsewhere, stdio: 'pipe' });
    expect(workTreeBlobs(join(elsewhere, `handoff-${cycle}`))).toEqual(workTreeBlobs(b));

    // Records: the out manifest is superseded by the return one, and nothing was deleted.
    const show = await run(['show', cycle], a);
    const revisions = show.json.data?.['revisions'] as { leg: string; current: boolean; integrity: string }[];
    expect(revisions.map((r) => [r.leg, r.current, r.integrity])).toEqual([
      ['out', false, 'ok'],
      ['return', true, 'ok'],
    ]);
    const returnManifest = JSON.parse(readFileSync(join(a, '.session-handoff', cycle, 'return', 'manifest.json'), 'utf8')) as {
      predecessor: string;
      leg: string;
    };
    const outBytes = readFileSync(join(a, '.session-handoff', cycle, 'manifest.json'));
    const { createHash } = await import('node:crypto');
    expect(returnManifest).toMatchObject({ leg: 'return', predecessor: createHash('sha256').update(outBytes).digest('hex') });
    const list = await run(['list'], a);
    expect(list.json.data?.['cycles']).toEqual([{ cycle, workspace: a, state: 'CLOSED', revisions: 2, integrity: 'ok', abandoned: false }]);
  });
});

describe('refusals, each with its exit code and nothing changed', () => {
  it('a tampered manifest is corrupt (74), with no fallback', async () => {
    const { a, b } = twoClones();
    const cycle = await evacuate(a);
    const path = join(a, '.session-handoff', cycle, 'manifest.json');
    writeFileSync(path, readFileSync(path, 'utf8').replace('"leg": "out"', '"leg": "out" '));
    const before = userState(b);
    const result = await run(['accept', cycle, '--as', 'x', '--checkout'], b);
    expect(result.code).toBe(74);
    expect(result.json.code).toBe('corrupt_record');
    expect(result.json.error?.message).toMatch(/does not match the sha256 recorded/);
    expect(userState(b)).toEqual(before);
    expect(await stateOf(a)).toBe('HANDOFF_READY');
  });

  it('a receiver with changes of its own is diverged (10), the differences are listed, nothing is written, and the hint is a command that works', async () => {
    const { a, b } = twoClones();
    const cycle = await evacuate(a);
    writeFileSync(join(b, 'mine.txt'), 'unsaved work of B\n');
    const before = userState(b);
    const result = await run(['accept', cycle, '--as', 'x'], b);
    expect(result.code).toBe(10);
    expect(result.json.code).toBe('diverged');
    const checks = result.json.data?.['checks'] as { name: string; status: string; observed: { differences?: string[] } }[];
    const workTree = checks.find((c) => c.name === 'work_tree');
    expect(workTree?.status).toBe('failed');
    expect(workTree?.observed.differences).toEqual(expect.arrayContaining(['M\tf.txt', 'A\tnotes.md']));
    expect(result.json.error?.message).toMatch(/changes of its own/);
    expect(userState(b)).toEqual(before);
    expect(existsSync(join(b, '.session-handoff', cycle))).toBe(false);
    expect(await stateOf(a)).toBe('HANDOFF_READY');
    // The hint's command, run exactly as printed, takes the cycle and keeps B's own work in the stash.
    const command = /`(git stash push --include-untracked && handoff accept \S+)`/.exec(result.json.error?.hint ?? '')?.[1];
    expect(command, result.json.error?.hint).toBeDefined();
    const [stash, accept] = (command ?? '').split(' && ');
    git(b, ...(stash ?? '').split(' ').slice(1));
    const taken = await run([...(accept ?? '').split(' ').slice(1)], b);
    expect(taken.json).toMatchObject({ code: 'accepted', data: { state: 'TAKEOVER' } });
    expect(git(b, 'branch', '--show-current')).toBe(`handoff/${cycle}`);
    expect(git(b, 'stash', 'list')).toMatch(/WIP on main/);
  });

  it('two ready cycles and --latest is ambiguous (11); a second accept is denied (77)', async () => {
    const first = twoClones();
    // A second clone of the same repository, evacuated too: two ready cycles of one repository.
    const other = join(tempDir('third'), 'c');
    git(first.a, 'clone', '-q', first.remote, other);
    await evacuate(first.a);
    await evacuate(other);
    const ambiguous = await run(['accept', '--latest', '--as', 'x'], first.b);
    expect(ambiguous.code).toBe(11);
    expect(ambiguous.json.code).toBe('ambiguous');

    const { a, b } = twoClones();
    const cycle = await evacuate(a);
    expect((await run(['accept', cycle, '--as', 'one', '--checkout'], b)).code).toBe(0);
    const second = await run(['accept', cycle, '--as', 'two', '--checkout'], b);
    expect(second.code).toBe(77);
    expect(second.json.error?.message).toMatch(/already taken by 'one'/);
  });

  it('an instruction file changed after the handoff is reported loudly in the accept result', async () => {
    const { a } = twoClones();
    // A gitignored instruction file: it steers the agent without being part of the tree.
    writeFileSync(join(a, '.gitignore'), 'CLAUDE.local.md\n');
    writeFileSync(join(a, 'CLAUDE.local.md'), 'use tabs\n');
    const cycle = await evacuate(a);
    writeFileSync(join(a, 'CLAUDE.local.md'), 'use spaces, never tabs\n');
    // Another agent in the same work tree takes over: the tree is the checkpoint, the rules are not.
    const result = await run(['accept', cycle, '--as', 'second-agent'], a);
    expect(result.json.code).toBe('accepted');
    const checks = result.json.data?.['checks'] as { name: string; status: string; detail: string }[];
    expect(checks.map((c) => c.name)).toEqual(['integrity', 'identity', 'commit', 'work_tree', 'instructions', 'recency']);
    expect(checks.find((c) => c.name === 'instructions')).toMatchObject({
      status: 'warning',
      detail: expect.stringMatching(/INSTRUCTION FILES CHANGED.*CLAUDE\.local\.md changed/),
    });
  });
});

describe('the return leg and one-way cycles', () => {
  it('a primary work tree changed since the freeze is never overwritten by the return (10)', async () => {
    const { a, b } = twoClones();
    const cycle = await evacuate(a);
    expect((await run(['accept', cycle, '--as', 'emergency', '--checkout'], b)).code).toBe(0);
    appendFileSync(join(b, 'f.txt'), 'from B\n');
    expect((await run(['return', '--no-wait'], b)).json.code).toBe('handoff_ready');
    writeFileSync(join(a, 'f.txt'), 'the primary kept typing after the freeze\n');
    const before = userState(a);
    const back = await run(['accept', cycle, '--return', '--as', 'primary', '--checkout'], a);
    expect(back.code).toBe(10);
    expect(back.json.code).toBe('diverged');
    expect(userState(a)).toEqual(before);
    expect(await stateOf(a)).toBe('RETURN_HANDOFF_READY');
  });

  it('a one-way cycle is closed from TAKEOVER by its holder, and recorded', async () => {
    const stateDir = tempDir('state');
    chmodSync(stateDir, 0o700);
    writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ profile: 'one-way' }));
    const oneWay = await startDaemon(stateDir);
    try {
      const { a, b } = twoClones();
      writeFileSync(join(a, 'f.txt'), 'changed\n');
      const cycle = ((await cli(stateDir, ['now', '--no-wait', '--json'], a)).json.data?.['cycle'] as { id: string }).id;
      expect((await cli(stateDir, ['accept', cycle, '--as', 'new-owner', '--checkout', '--json'], b)).code).toBe(0);
      expect((await cli(stateDir, ['close', '--json'], b)).code).toBe(64);
      expect((await cli(stateDir, ['close', '--one-way', '--token', '99', '--json'], b)).code).toBe(77);
      const closed = await cli(stateDir, ['close', '--one-way', '--json'], b);
      expect(closed.json).toMatchObject({ code: 'ok', data: { state: 'CLOSED' } });
      expect(readFileSync(join(stateDir, 'journal.jsonl'), 'utf8')).toContain('"CLOSE_ONE_WAY"');
    } finally {
      await oneWay.stop();
    }
  });
});

describe('stale manifests', () => {
  it('a manifest older than the max age is stale (10)', async () => {
    const stateDir = tempDir('state');
    chmodSync(stateDir, 0o700);
    writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ takeover_max_age_hours: 0.0001 }));
    const aged = await startDaemon(stateDir);
    try {
      const { a, b } = twoClones();
      writeFileSync(join(a, 'f.txt'), 'changed\n');
      const now = await cli(stateDir, ['now', '--no-wait', '--json'], a);
      const cycle = (now.json.data?.['cycle'] as { id: string }).id;
      await new Promise((resolve) => setTimeout(resolve, 600));
      const result = await cli(stateDir, ['accept', cycle, '--as', 'x', '--checkout', '--json'], b);
      expect(result.code).toBe(10);
      expect(result.json.code).toBe('stale');
      expect(existsSync(join(b, 'f.txt')) && readFileSync(join(b, 'f.txt'), 'utf8')).toBe('one\n');
    } finally {
      await aged.stop();
    }
  });
});
