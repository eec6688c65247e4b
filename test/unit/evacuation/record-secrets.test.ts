import { describe, expect, it } from 'vitest';
import { redactRecord, refuseSecrets } from '../../../daemon/evacuation/record-secrets.js';
import { plantedSecrets } from '../../support/secrets.js';

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
});
