import { describe, expect, it } from 'vitest';
import { judgeTakeover, type Check, type ReceiverObservation } from '../../../protocol/index.js';
import type { Manifest } from '../../../schemas/index.js';
import { checkpoint, manifestWith, repository } from './manifest-fixture.js';

const CREATED = Date.parse('2026-08-20T10:00:00.000Z');
const HOUR = 3_600_000;
const MAX_AGE_HOURS = 24;

/** A receiver that holds exactly what the manifest recorded. */
const matching: ReceiverObservation = {
  root_commit: repository.root_commit,
  remote_urls: ['https://example.invalid/r.git', 'git@example.invalid:r.git'],
  commit_present: true,
  commit_source: 'present',
  head: checkpoint.commit,
  tree: checkpoint.tree ?? '',
  differences: [],
  checkout: 'not_requested',
  checkout_blocker: null,
  instructions: [],
};

function judge(receiver: Partial<ReceiverObservation> = {}, manifest: Manifest = manifestWith(null), ageHours = 1) {
  return judgeTakeover(manifest, { ...matching, ...receiver }, CREATED + ageHours * HOUR, MAX_AGE_HOURS);
}

function checkOf(checks: readonly Check[], name: Check['name']): Check {
  const found = checks.find((c) => c.name === name);
  if (found === undefined) throw new Error(`no ${name} check`);
  return found;
}

const withRepository = (fields: Partial<Manifest['repository']>, leg: Manifest['leg'] = 'out'): Manifest => {
  const manifest = manifestWith(null);
  return { ...manifest, leg, repository: { ...manifest.repository, ...fields } };
};

describe('judgeTakeover', () => {
  it('verifies a receiver that holds exactly the checkpoint, check by check in CONTRACT order', () => {
    const { code, checks } = judge();
    expect(code).toBe('verified');
    expect(checks.map((c) => [c.name, c.status])).toEqual([
      ['integrity', 'ok'],
      ['identity', 'ok'],
      ['commit', 'ok'],
      ['work_tree', 'ok'],
      ['instructions', 'ok'],
      ['recency', 'ok'],
    ]);
    // Integrity is checked before the judge runs (the daemon compares the recorded sha256); it still says what was compared.
    expect(checkOf(checks, 'integrity')).toMatchObject({
      expected: 'sha256 recorded in the journal',
      observed: 'bytes on disk match',
      detail: 'manifest and HANDOFF.md match their recorded sha256',
    });
    expect(checkOf(checks, 'identity').detail).toBe('same repository');
    expect(checkOf(checks, 'commit').detail).toBe('checkpoint commit is present');
    expect(checkOf(checks, 'work_tree').detail).toBe('the work tree equals the checkpoint');
    expect(checkOf(checks, 'instructions').detail).toBe('instruction files unchanged');
    expect(checkOf(checks, 'recency')).toMatchObject({ expected: 'at most 24 h old', observed: '1.0 h old', detail: 'recent enough' });
  });

  describe('identity', () => {
    it('refuses another repository (a different root commit) and shows both sides', () => {
      const { code, checks } = judge({ root_commit: 'e'.repeat(40) });
      expect(code).toBe('diverged');
      expect(checkOf(checks, 'identity')).toEqual({
        name: 'identity',
        status: 'failed',
        expected: { root_commit: repository.root_commit, remote_url: repository.remote_url },
        observed: { root_commit: 'e'.repeat(40), remote_urls: matching.remote_urls },
        detail: 'this checkout is another repository (its root commit differs)',
      });
    });

    it('accepts any root when the source recorded none', () => {
      const { code, checks } = judge({ root_commit: 'e'.repeat(40) }, withRepository({ root_commit: null }));
      expect(code).toBe('verified');
      expect(checkOf(checks, 'identity').status).toBe('ok');
    });

    it('only warns when the history matches but no remote has the recorded URL', () => {
      const { code, checks } = judge({ remote_urls: ['https://elsewhere.invalid/r.git'] });
      expect(code).toBe('verified');
      expect(checkOf(checks, 'identity')).toMatchObject({
        status: 'warning',
        detail: 'same history, but no remote of this checkout has the recorded URL',
      });
    });

    it('needs no remote when the source had none', () => {
      const { checks } = judge({ remote_urls: [] }, withRepository({ remote_url: null }));
      expect(checkOf(checks, 'identity').status).toBe('ok');
    });
  });

  describe('commit', () => {
    it('says the commit came from the remote when it was fetched', () => {
      const { code, checks } = judge({ commit_source: 'fetched' });
      expect(code).toBe('verified');
      expect(checkOf(checks, 'commit')).toMatchObject({
        status: 'ok',
        expected: checkpoint.commit,
        observed: 'fetched',
        detail: 'checkpoint commit is fetched',
      });
    });

    it('refuses a checkout without the checkpoint commit and names the commit and where it looked', () => {
      const { code, checks } = judge({ commit_present: false, commit_source: 'missing' });
      expect(code).toBe('diverged');
      expect(checkOf(checks, 'commit')).toMatchObject({
        status: 'failed',
        detail: `checkpoint ${checkpoint.commit} is not in this checkout and could not be fetched from refs/heads/handoff/x`,
      });
    });

    it('says "(none)" and "the remote" when the manifest recorded neither commit nor ref', () => {
      const manifest = manifestWith(null);
      const bare = { ...manifest, checkpoint: { ...manifest.checkpoint, commit: null, ref: null } };
      const { checks } = judge({ commit_present: false, commit_source: 'missing' }, bare);
      expect(checkOf(checks, 'commit').detail).toBe('checkpoint (none) is not in this checkout and could not be fetched from the remote');
    });
  });

  describe('work tree', () => {
    const other = { tree: 'f'.repeat(40), head: 'b'.repeat(40), differences: ['M\tsrc/a.ts'] };

    it('refuses a work tree that differs and shows what differs', () => {
      const { code, checks } = judge(other);
      expect(code).toBe('diverged');
      expect(checkOf(checks, 'work_tree')).toEqual({
        name: 'work_tree',
        status: 'failed',
        expected: checkpoint.tree,
        observed: other,
        detail: 'the work tree differs from the checkpoint',
      });
    });

    it('only warns when the accept can move a clean work tree onto handoff/<cycle> (nothing can be lost)', () => {
      const { code, checks } = judge({ ...other, checkout: 'would_move' });
      expect(code).toBe('verified');
      expect(checkOf(checks, 'work_tree')).toMatchObject({
        status: 'warning',
        observed: other.tree,
        detail: `the work tree is clean: the accept checks the checkpoint out on the local branch handoff/${manifestWith(null).cycle_id} (nothing can be lost)`,
      });
    });

    it('refuses a work tree with changes of its own, naming the loss on each leg', () => {
      const { code, checks } = judge({ ...other, checkout: 'refused_dirty' });
      expect(code).toBe('diverged');
      expect(checkOf(checks, 'work_tree').detail).toBe('the work tree has changes of its own: moving it to the checkpoint would lose them');
      const back = judge({ ...other, checkout: 'refused_dirty' }, withRepository({}, 'return'));
      expect(back.code).toBe('diverged');
      expect(checkOf(back.checks, 'work_tree').detail).toBe(
        'the work tree changed since it was frozen at the out leg: bringing the returned work in would overwrite that',
      );
    });

    it("passes git's reason on when git cannot move the work tree", () => {
      const blocked = judge({ ...other, checkout: 'refused_git', checkout_blocker: 'index.lock exists' });
      expect(blocked.code).toBe('diverged');
      expect(checkOf(blocked.checks, 'work_tree').detail).toBe('git cannot move the work tree (index.lock exists), found before the lease moved');
      const unknown = judge({ ...other, checkout: 'refused_git' });
      expect(checkOf(unknown.checks, 'work_tree').detail).toMatch(/\(unknown cause\)/);
    });

    it('on a return leg, only warns when the primary is still as frozen: the accept brings the work home', () => {
      const back = judge({ ...other, checkout: 'would_move' }, withRepository({}, 'return'));
      expect(back.code).toBe('verified');
      expect(checkOf(back.checks, 'work_tree')).toMatchObject({
        status: 'warning',
        detail: expect.stringMatching(/still as frozen at the out leg: the accept brings the returned work into it/),
      });
      expect(judge(other, withRepository({}, 'return')).code).toBe('diverged');
    });
  });

  describe('instructions', () => {
    it('warns, naming each instruction file removed, changed or new, without refusing', () => {
      const recorded = [
        { path: 'AGENTS.md', sha256: '1'.repeat(64) },
        { path: 'CLAUDE.md', sha256: '2'.repeat(64) },
        { path: 'GEMINI.md', sha256: '3'.repeat(64) },
      ];
      const observed = [
        { path: 'CLAUDE.md', sha256: '9'.repeat(64) },
        { path: 'GEMINI.md', sha256: '3'.repeat(64) },
        { path: '.clinerules', sha256: '4'.repeat(64) },
      ];
      const { code, checks } = judge({ instructions: observed }, withRepository({ instructions: recorded }));
      expect(code).toBe('verified');
      expect(checkOf(checks, 'instructions')).toEqual({
        name: 'instructions',
        status: 'warning',
        expected: recorded,
        observed,
        detail: 'INSTRUCTION FILES CHANGED SINCE THE HANDOFF: AGENTS.md was removed; CLAUDE.md changed; .clinerules is new — read them before acting',
      });
    });
  });

  describe('recency', () => {
    it('is fresh up to the maximum age inclusive, then stale', () => {
      expect(judge({}, undefined, MAX_AGE_HOURS).code).toBe('verified');
      const { code, checks } = judge({}, undefined, MAX_AGE_HOURS + 0.5);
      expect(code).toBe('stale');
      expect(checkOf(checks, 'recency')).toMatchObject({
        status: 'failed',
        observed: '24.5 h old',
        detail: 'the manifest is stale; the source may have moved on',
      });
    });

    it('a stale manifest that also diverges is reported as diverged: real state wins', () => {
      expect(judge({ commit_present: false, commit_source: 'missing' }, undefined, 48).code).toBe('diverged');
    });
  });
});
