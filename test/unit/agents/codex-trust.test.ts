import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { codexHookStates, codexHookTrust, withCodexTrust } from '../../../adapters/agents/index.js';

const HOOKS = JSON.parse(readFileSync(new URL('../../../examples/codex/hooks.json', import.meta.url), 'utf8')) as unknown;
const PATH = '/home/me/.codex/hooks.json';
const NAMES = ['claude-session-start', 'claude-context'] as const;

/**
 * `currentHash` of each hook of examples/codex/hooks.json as codex-cli 0.169.0 itself reports it
 * (`codex app-server`, method `hooks/list`): the hash is of the hook, not of the file's path.
 */
const CODEX_0_169 = {
  session_start: 'sha256:fdceb53044e0fbb53a9c3e0721d532059891f385c69824b58f7c84a4d0db659d',
  user_prompt_submit: 'sha256:f318468940efd9e36f46c2414d7dfd2b249be12b4c88d682632a977d605670e8',
  post_tool_use: 'sha256:a9dda1c62518d8a26a1965cf61d67876401abe786eddf1412df84305e746d138',
};

describe('Codex hook trust, as Codex computes it', () => {
  it('the hash of each of our hooks equals the one Codex 0.169 reports, under the key Codex uses', () => {
    const found = codexHookTrust(HOOKS, PATH, new Map(), NAMES);
    expect(found.map(({ key, current_hash, trust }) => ({ key, current_hash, trust }))).toEqual([
      { key: `${PATH}:session_start:0:0`, current_hash: CODEX_0_169.session_start, trust: 'needs_review' },
      { key: `${PATH}:user_prompt_submit:0:0`, current_hash: CODEX_0_169.user_prompt_submit, trust: 'needs_review' },
      { key: `${PATH}:post_tool_use:0:0`, current_hash: CODEX_0_169.post_tool_use, trust: 'needs_review' },
    ]);
  });

  it('config.toml as Codex writes it: trusted, changed since the review, disabled; other tables and layouts ignored', () => {
    const toml = [
      'model = "gpt-5"',
      `[hooks.state."${PATH}:session_start:0:0"]`,
      `trusted_hash = "${CODEX_0_169.session_start}"`,
      'enabled = true',
      '',
      `[hooks.state."${PATH}:user_prompt_submit:0:0"] # an old review`,
      'trusted_hash = "sha256:0000000000000000000000000000000000000000000000000000000000000000"',
      `[hooks.state."${PATH}:post_tool_use:0:0"]`,
      `trusted_hash = "${CODEX_0_169.post_tool_use}"`,
      'enabled = false',
      '[projects."/repo"]',
      `trusted_hash = "${CODEX_0_169.session_start}"`,
    ].join('\n');
    const trust = codexHookTrust(HOOKS, PATH, codexHookStates(toml), NAMES).map((hook) => hook.trust);
    expect(trust).toEqual(['trusted', 'changed_since_review', 'disabled']);
    expect(codexHookStates('[hooks.state]\n"k" = { trusted_hash = "x" }\n').size).toBe(0);
  });

  it("someone else's hooks are not ours to report", () => {
    const theirs = { hooks: { Stop: [{ hooks: [{ type: 'command', command: 'notify.sh' }] }] } };
    expect(codexHookTrust(theirs, PATH, new Map(), NAMES)).toEqual([]);
    expect(codexHookTrust('not an object', PATH, new Map(), NAMES)).toEqual([]);
  });
});

describe('install codex --trust: the trust Codex records, for exactly our hooks', () => {
  const trustOf = (toml: string) => codexHookTrust(HOOKS, PATH, codexHookStates(toml), NAMES);

  it('appends a table per hook never reviewed, replaces the hash of one changed since, keeps a disabled one and every other line', () => {
    const before = [
      'model = "gpt-5"',
      `[hooks.state."${PATH}:user_prompt_submit:0:0"]`,
      'trusted_hash = "sha256:0000000000000000000000000000000000000000000000000000000000000000"',
      `[hooks.state."${PATH}:post_tool_use:0:0"]`,
      'enabled = false',
      '[analytics]',
      'enabled = false',
      '',
    ].join('\n');
    const after = withCodexTrust(before, trustOf(before)) ?? '';
    expect(after).toBe(
      [
        'model = "gpt-5"',
        `[hooks.state."${PATH}:user_prompt_submit:0:0"]`,
        `trusted_hash = "${CODEX_0_169.user_prompt_submit}"`,
        `[hooks.state."${PATH}:post_tool_use:0:0"]`,
        'enabled = false',
        '[analytics]',
        'enabled = false',
        `[hooks.state."${PATH}:session_start:0:0"]`,
        `trusted_hash = "${CODEX_0_169.session_start}"`,
        '',
      ].join('\n'),
    );
    expect(trustOf(after).map((hook) => hook.trust)).toEqual(['trusted', 'trusted', 'disabled']);
    // Once trusted, nothing more to write.
    expect(withCodexTrust(after, trustOf(after))).toBeNull();
  });

  it('an empty config.toml gets the three tables', () => {
    const after = withCodexTrust('', trustOf('')) ?? '';
    expect(trustOf(after).every((hook) => hook.trust === 'trusted')).toBe(true);
    expect(after.startsWith('[hooks.state.')).toBe(true);
  });
});
