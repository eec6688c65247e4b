import { describe, expect, it } from 'vitest';
import { holdsMarker, withheldBlock, withheldMarker } from '../../../protocol/withheld.js';
import type { Manifest } from '../../../schemas/index.js';
import { manifestWith } from './manifest-fixture.js';

const manifest = (fields: Partial<Manifest>): Manifest => ({ ...manifestWith(null), ...fields });
const INTRO =
  "The daemon's secret scan (secretlint, recommended rules and the kubeconfig and .netrc patterns) found a secret in these files of the source, or in their names, or a `secretlint-disable` comment HEAD does not have, so the checkpoint does not carry them: an untracked file is absent, a tracked one is at its last committed content. The source's own files are unchanged; get these values from their owner, not from the remote.";

// HANDOFF.md's block on the secret scan: the receiver's only word on what it will not find.
describe('withheldBlock: the whole block, line for line', () => {
  it('one withheld file: what the scan did, the file, and how to include it on purpose', () => {
    expect(withheldBlock(manifest({ withheld: [{ path: '.env', rule: 'aws', reason: 'an AWS key' }] }))).toEqual([
      '## Withheld: files that hold a secret',
      '',
      INTRO,
      '',
      '- `.env`: `aws`, `an AWS key`',
      '',
      'To include one on purpose, run its line at the root of the source repository; it applies from the next snapshot on (a new revision, the return leg or the next `handoff now`), until its line is removed from `.session-handoff/allow-secrets`:',
      '',
      '```sh',
      "mkdir -p .session-handoff && printf '%s\\n' '.env' >> .session-handoff/allow-secrets",
      '```',
      '',
    ]);
  });

  it('a withheld name that holds a secret: listed, with no include command', () => {
    const lines = withheldBlock(manifest({ withheld: [{ path: `k-${withheldMarker('npm')}`, rule: 'npm', reason: 'name' }] }));
    expect(lines).toEqual(['## Withheld: files that hold a secret', '', INTRO, '', '- `k-[withheld: secretlint rule npm]`: `npm`, `name`', '']);
  });

  it('files pushed on purpose, and an allow list the scan ignored', () => {
    expect(withheldBlock(manifest({ secret_scan: { allow_list: 'ignored', allowed: ['dev.env'], unscanned: [] } }))).toEqual([
      '## Secret scan',
      '',
      "Pushed on purpose although the scan found a secret in them (listed in the source's `.session-handoff/allow-secrets`):",
      '',
      '- `dev.env`',
      '',
      "The source's `.session-handoff/allow-secrets` was ignored: it is tracked or in a commit, so the remote could have written it. Only an untracked list that no commit holds is read.",
      '',
    ]);
  });

  it('files pushed unscanned, each with why', () => {
    expect(withheldBlock(manifest({ secret_scan: { allow_list: 'read', allowed: [], unscanned: [{ path: 'a.bin', why: 'binary' }] } }))).toEqual([
      '## Secret scan',
      '',
      'Pushed without a scan:',
      '',
      '- `a.bin`: binary',
      '',
    ]);
  });
});

describe('withheldBlock of a manifest written before the secret scan was recorded', () => {
  it('says nothing: there is nothing it could say', () => {
    const before: Manifest = { ...manifestWith(null) };
    delete before.withheld;
    delete before.secret_scan;
    expect(withheldBlock(before)).toEqual([]);
  });
});

describe('holdsMarker: a text in which a secret was replaced', () => {
  it('finds the marker of any rule, and nothing else', () => {
    expect(holdsMarker(`x${withheldMarker('aws')}`)).toBe(true);
    expect(holdsMarker('[withheld: secret]')).toBe(false);
    expect(withheldMarker('r')).toBe('[withheld: secretlint rule r]');
  });
});
