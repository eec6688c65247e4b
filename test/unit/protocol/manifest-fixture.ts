import { buildManifest, createStepScope, initialSnapshot, step, type Cycle } from '../../../protocol/index.js';
import type { Capsule, Checkpoint, Manifest, RepositoryObservation } from '../../../schemas/index.js';
import { POLICY, T0 } from './machine-harness.js';

// One manifest for the tests that read one: the daemon side fixed, the capsule and validation output varying.
export function cycle(): Cycle {
  const start = initialSnapshot({ root: '/repo', policy: POLICY, profile: 'emergency-return', at: T0 });
  const { next } = step(createStepScope(start), start, { type: 'NOW', reason: 'test', wait: false, at: T0, entropy: 'abcdef' });
  const value = next.context.cycle;
  if (value === null) throw new Error('no cycle');
  return value;
}

export const repository: RepositoryObservation = {
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
export const checkpoint: Checkpoint = {
  mechanism: 'handoff_branch',
  ref: 'refs/heads/handoff/x',
  commit: 'c'.repeat(40),
  tree: 'd'.repeat(40),
  remote: 'origin',
  remote_verified: true,
  created_at: '2026-08-20T10:00:00.000Z',
};
const QUALITY = { score: 3, max: 6, missing: ['no acceptance criteria'] };

/** A manifest with a fixed daemon side: only the capsule, the trigger's reason and the validation output vary. */
export function manifestWith(capsule: Capsule | null, elsewhere = 'npm test: 1 failing'): Manifest {
  const manifest = buildManifest({
    cycle: cycle(),
    leg: 'out',
    revision: 1,
    createdAt: '2026-08-20T10:00:00.000Z',
    predecessor: null,
    source: 's1',
    capsule,
    quality: QUALITY,
    repository,
    validations: [{ command: 'npm test', status: 'failed', exit_code: 1, duration_ms: 1200, output_tail: elsewhere }],
    checkpoint,
  });
  return { ...manifest, trigger: { ...manifest.trigger, reason: elsewhere } };
}
