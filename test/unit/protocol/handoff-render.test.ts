import { describe, expect, it } from 'vitest';
import { buildManifest, initialSnapshot, recoveryCommands, renderHandoff, step, type Cycle } from '../../../protocol/index.js';
import type { Checkpoint, RepositoryObservation } from '../../../schemas/index.js';
import { POLICY, T0 } from './machine-harness.js';

function cycle(): Cycle {
  const start = initialSnapshot({ root: '/repo', policy: POLICY, profile: 'emergency-return', at: T0 });
  const { next } = step(start, { type: 'NOW', reason: 'test', wait: false, at: T0, entropy: 'abcdef' });
  const value = next.context.cycle;
  if (value === null) throw new Error('no cycle');
  return value;
}

const repository: RepositoryObservation = {
  remote: 'origin',
  remote_url: 'https://example.invalid/r.git',
  root_commit: 'a'.repeat(40),
  branch: 'main',
  head: 'b'.repeat(40),
  upstream: 'origin/main',
  ahead: 1,
  behind: 0,
  dirty: { staged: ['a.ts'], unstaged: [], untracked: ['n.md'] },
  operation_in_progress: null,
  instructions: [],
};
const checkpoint: Checkpoint = { mechanism: 'handoff_branch', ref: 'refs/heads/handoff/x', commit: 'c'.repeat(40), tree: 'd'.repeat(40), remote: 'origin', remote_verified: true, created_at: '2026-08-20T10:00:00.000Z' };

describe('HANDOFF.md', () => {
  it('says plainly when the capsule is missing, and lists every section even when empty', () => {
    const manifest = buildManifest({ cycle: cycle(), leg: 'out', revision: 1, createdAt: '2026-08-20T10:00:00.000Z', predecessor: null, source: null, capsule: null, quality: { score: 0, max: 6, missing: ['no capsule'] }, repository, validations: [], checkpoint });
    expect(manifest.capsule_source).toBe('missing');
    const text = renderHandoff(manifest);
    expect(text.split('\n')[2]).toMatch(/^\*\*Next action:\*\* No capsule was written/);
    expect(text.split('\n')[4]).toBe('_capsule 0/6: no capsule_');
    expect(text).toContain('_The agent wrote no capsule: objective unknown._');
    for (const heading of ['Recover the source', 'Files to read first', 'Objective', 'Work', 'Decisions', 'Do not repeat', 'Validations', 'Risks']) {
      expect(text).toContain(`## ${heading}`);
    }
    expect(text.trimEnd().endsWith('Authority: none — verify before acting.')).toBe(true);
  });

  it('recovery commands quote what they take from the manifest', () => {
    const manifest = buildManifest({
      cycle: cycle(),
      leg: 'out',
      revision: 1,
      createdAt: '2026-08-20T10:00:00.000Z',
      predecessor: null,
      source: null,
      capsule: null,
      quality: { score: 0, max: 6, missing: ['no capsule'] },
      repository: { ...repository, remote_url: "https://example.invalid/it's; rm -rf ~" },
      validations: [],
      checkpoint,
    });
    expect(recoveryCommands(manifest)[0]).toBe(`git clone --no-checkout 'https://example.invalid/it'\\''s; rm -rf ~' 'handoff-${manifest.cycle_id}'`);
  });
});
