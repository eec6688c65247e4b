import { describe, expect, it } from 'vitest';
import { redactRecord, refuseSecrets } from '../../../daemon/evacuation/record-secrets.js';
import { createAjv } from '../../../daemon/schema-check.js';
import { buildManifest, createStepScope, EMPTY_CAPSULE, initialSnapshot, renderHandoff, serializeManifest, step } from '../../../protocol/index.js';
import { ManifestSchema, type Capsule, type Manifest } from '../../../schemas/index.js';
import { plantedSecrets } from '../../support/secrets.js';
import { POLICY, T0 } from '../protocol/machine-harness.js';

const GITHUB = '[withheld: secretlint rule @secretlint/secretlint-rule-github]';
const PATTERN = '[withheld: secretlint rule @secretlint/secretlint-rule-pattern]';

describe('a record passes the secret scan before it is written', () => {
  it('replaces each secret in its strings by the marker naming the rule, keeps every other byte, and gives the same bytes again', async () => {
    const secrets = plantedSecrets();
    const record = {
      cycle_id: '20261202T000000Z-abcdef',
      trigger: { reason: `rotate ${secrets.githubToken} today` },
      validations: [{ command: `deploy --token ${secrets.githubToken}`, exit_code: 1, output_tail: `ok\n${secrets.netrc}done` }],
      capsule: { decisions: [{ decision: `kubeconfig:\n${secrets.kubeconfig}`, why: 'plain' }] },
      repository: { dirty: { untracked: [`notes-${secrets.githubToken}.md`, 'plain.md'] } },
      count: 3,
      flag: null,
    };
    const first = await redactRecord(record);
    const again = await redactRecord(record);
    expect(JSON.stringify(again.value)).toBe(JSON.stringify(first.value));
    expect(first.redacted).toBe(5);
    const text = JSON.stringify(first.value);
    for (const secret of [secrets.githubToken, secrets.netrcPassword, secrets.kubeToken, secrets.kubeKey]) expect(text).not.toContain(secret);
    expect(first.value.trigger.reason).toBe(`rotate ${GITHUB} today`);
    expect(first.value.validations[0]?.command).toBe(`deploy --token ${GITHUB}`);
    expect(first.value.validations[0]?.output_tail).toBe(`ok\nmachine git.example.invalid\n  login bob\n  password ${PATTERN}\ndone`);
    expect(first.value.repository.dirty.untracked).toEqual([`notes-${GITHUB}.md`, 'plain.md']);
    expect(first.value.capsule.decisions[0]?.decision).toContain(`    token: ${PATTERN}`);
    expect({ count: first.value.count, flag: first.value.flag, cycle: first.value.cycle_id }).toEqual({ count: 3, flag: null, cycle: record.cycle_id });
  });

  it('a secretlint-disable comment in a record exempts nothing', async () => {
    const { githubToken } = plantedSecrets();
    const { value } = await redactRecord({ reason: `// secretlint-disable\n${githubToken} // secretlint-disable-line` });
    expect(value.reason).toBe(`// secretlint-disable\n${GITHUB} // secretlint-disable-line`);
  });

  it('the last look refuses a record whose name, bytes or message hold a secret, naming the rule and never the secret', async () => {
    const { githubToken } = plantedSecrets();
    await expect(
      refuseSecrets({ 'lease.json': '{"state":"offered"}', 'commit message': 'handoff x: lease offered' }, 'the lease', 'drain_blocked'),
    ).resolves.toBe(undefined);
    const refused = refuseSecrets({ 'lease.json': '{}', 'commit message': `lease offered to ${githubToken}` }, 'the lease offer', 'drain_blocked');
    await expect(refused).rejects.toMatchObject({
      code: 'drain_blocked',
      message: 'the lease offer would carry a secret (secretlint rule @secretlint/secretlint-rule-github), so it was neither committed nor pushed',
    });
  });

  it('a manifest with a secret in every kind of field validates once redacted, and its JSON and HANDOFF.md pass the last look', async () => {
    const secrets = plantedSecrets();
    const token = secrets.githubToken;
    const fresh = initialSnapshot({ root: '/repo', policy: POLICY, profile: 'emergency-return', at: T0 });
    const { next } = step(createStepScope(fresh), fresh, {
      type: 'NOW',
      reason: `quota; ${token}`,
      wait: false,
      at: T0,
      entropy: 'abcdef',
    });
    if (next.context.cycle === null) throw new Error('no cycle');
    const manifest = buildManifest({
      cycle: next.context.cycle,
      leg: 'out',
      revision: 1,
      createdAt: '2026-12-02T00:00:00.000Z',
      predecessor: null,
      source: null,
      capsule: {
        ...(EMPTY_CAPSULE as Capsule),
        objective: `ship with ${token}`,
        next_action: `export TOKEN=${token}`,
        decisions: [`kubeconfig:\n${secrets.kubeconfig}`],
        first_files: [`notes-${token}.md`],
      } as Capsule,
      quality: { score: 0, max: 6, missing: [] },
      repository: {
        remote: 'origin',
        remote_url: 'https://example.invalid/r.git',
        root_commit: 'a'.repeat(40),
        branch: 'main',
        head: 'b'.repeat(40),
        upstream: null,
        ahead: null,
        behind: null,
        dirty: { staged: [], unstaged: [], untracked: [`notes-${token}.md`] },
        operation_in_progress: null,
        instructions: [],
      },
      validations: [{ command: `deploy ${token}`, status: 'failed', exit_code: 1, duration_ms: 5, output_tail: `${secrets.netrc}${secrets.env}` }],
      checkpoint: {
        mechanism: 'handoff_branch',
        ref: 'refs/heads/handoff/x',
        commit: 'c'.repeat(40),
        tree: 'd'.repeat(40),
        remote: 'origin',
        remote_verified: true,
        created_at: '2026-12-02T00:00:00.000Z',
      },
    });
    const { value } = await redactRecord(manifest);
    expect(createAjv().compile<Manifest>(ManifestSchema)(structuredClone(value))).toBe(true);
    const files = { 'manifest.json': serializeManifest(value), 'HANDOFF.md': renderHandoff(value) };
    await expect(refuseSecrets(files, 'the package', 'drain_blocked')).resolves.toBe(undefined);
    const text = Object.values(files).join('');
    for (const secret of [token, secrets.kubeToken, secrets.kubeKey, secrets.netrcPassword, secrets.awsSecret]) expect(text).not.toContain(secret);
  });
});
