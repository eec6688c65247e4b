import { describe, expect, it } from 'vitest';
import { renderHandoff } from '../../../protocol/index.js';
import type { Manifest } from '../../../schemas/index.js';
import { manifestWith } from './manifest-fixture.js';

/** The fixture's manifest with its one validation given evidence of when it ran. */
function withEvidence(evidence: Pick<Manifest['validations'][number], 'ran_in' | 'ran_at'>): Manifest {
  const manifest = manifestWith(null);
  const [validation] = manifest.validations;
  if (validation === undefined) throw new Error('the fixture has a validation');
  return { ...manifest, validations: [{ ...validation, status: 'passed', exit_code: 0, ...evidence }] };
}

describe('HANDOFF.md says when the validation ran', () => {
  it('at PREPARE, reused: how long before the package, and that the work tree has not changed since', () => {
    const manifest = withEvidence({ ran_in: 'prepare' });
    const ranAt = new Date(Date.parse(manifest.created_at) - 4 * 60_000).toISOString();
    expect(renderHandoff({ ...manifest, validations: manifest.validations.map((v) => ({ ...v, ran_at: ranAt })) })).toContain(
      '**PASSED** `npm test` (exit 0, 1200 ms) — passed at PREPARE 4 min before this package, work tree unchanged since',
    );
  });

  it('at evacuation; and a manifest written before the evidence was kept says nothing of it', () => {
    expect(renderHandoff(withEvidence({ ran_in: 'evacuation', ran_at: '2026-01-01T00:00:00.000Z' }))).toContain(
      '**PASSED** `npm test` (exit 0, 1200 ms) — run at evacuation',
    );
    expect(renderHandoff(withEvidence({}))).toMatch(/^\*\*PASSED\*\* `npm test` \(exit 0, 1200 ms\)$/m);
  });

  it('a status of two words is written as two; a PREPARE run of unknown time is not dated', () => {
    const manifest = withEvidence({ ran_in: 'prepare', ran_at: '2026-01-01T00:00:00.000Z' });
    const timedOut = { ...manifest, validations: manifest.validations.map((v) => ({ ...v, status: 'timed_out' as const, ran_at: manifest.created_at })) };
    expect(renderHandoff(timedOut)).toContain(
      '**TIMED_OUT** `npm test` (exit 0, 1200 ms) — timed out at PREPARE 0 s before this package, work tree unchanged since',
    );
    expect(renderHandoff(withEvidence({ ran_in: 'prepare' }))).toMatch(/^\*\*PASSED\*\* `npm test` \(exit 0, 1200 ms\)$/m);
  });
});
