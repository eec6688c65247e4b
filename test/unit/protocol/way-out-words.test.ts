import { describe, expect, it } from 'vitest';
import { formatAge } from '../../../protocol/time-words.js';
import { blockedWayOut, UNKNOWN_WAY_OUT, wayOutSentence, type WayOutFailure } from '../../../protocol/way-out.js';
import type { WayOut } from '../../../schemas/index.js';

const T0 = Date.parse('2026-08-20T10:00:00Z');
const VIEW = { nowMs: T0 + 120_000, evacuatePercent: 85, age: formatAge };
const DOC = 'docs/troubleshooting.md#the-way-out-is-blocked';
const failure: WayOutFailure = {
  remote: 'up',
  step: 'dry_run',
  kind: 'failed',
  transport: 'http',
  sshAgent: true,
  words: 'fatal: x',
  timeoutSeconds: 45,
};

describe('blockedWayOut: every failure has a cause in the user terms and a fix that ends in the doc', () => {
  it.each<[string, Partial<WayOutFailure>, string, string]>([
    ['no URL', { step: 'url' }, 'up has no URL to push to: fatal: x', 'set one with `git remote set-url up URL`'],
    [
      'a probe it could not delete, without a ref name',
      { step: 'probe_cleanup', kind: 'rejected' },
      "up took the rehearsal's probe ref  but refused to delete it: fatal: x",
      `delete it on the server (\`git push up :\`); the server must let the daemon delete what it pushed under refs/handoff/ (see ${DOC})`,
    ],
    [
      'Git LFS not running',
      { step: 'lfs' },
      "the repository uses Git LFS and git-lfs does not run in the daemon's environment (fatal: x), so the content of its LFS files could not reach up",
      `install git-lfs where the daemon finds it (Debian/Ubuntu: apt-get install git-lfs); see ${DOC}`,
    ],
    [
      'SSH without an agent',
      { kind: 'credentials', transport: 'ssh', sshAgent: false },
      "up asks for credentials in the daemon's environment: the daemon has no SSH agent (SSH_AUTH_SOCK is unset, as in a service started at login)",
      `give the daemon's service an SSH agent or a key without a passphrase; see ${DOC}`,
    ],
    [
      'SSH keys refused',
      { kind: 'credentials', transport: 'ssh' },
      "up refuses the SSH keys the daemon's agent offers: fatal: x",
      `add a key to the agent the daemon uses that the server accepts; see ${DOC}`,
    ],
    [
      'HTTP credentials',
      { kind: 'credentials', transport: 'http', sshAgent: false },
      "up asks for credentials in the daemon's environment and the daemon never prompts: no credential helper answered",
      `configure a credential helper that needs no terminal (a stored token) for the daemon's user; see ${DOC}`,
    ],
    ['a timeout', { kind: 'timed_out' }, 'up did not answer within 45 s', `check the network or the server, or raise git_timeout_seconds; see ${DOC}`],
    ['git not running', { kind: 'not_run' }, 'git could not run: fatal: x', `see ${DOC}`],
    [
      'the server policy',
      { step: 'policy', kind: 'failed' },
      "up's server policy refuses refs under refs/handoff/ (its hooks rejected the probe: fatal: x)",
      `allow pushes to refs/heads/handoff/* and refs/handoff/* on the server, or make another remote the branch's upstream; see ${DOC}`,
    ],
    [
      'a rejected dry run',
      { kind: 'rejected' },
      'up refuses the refs the evacuation would push (dry run): fatal: x',
      `allow pushes to refs/heads/handoff/* and refs/handoff/* for the daemon's user; see ${DOC}`,
    ],
    [
      'a failed dry run',
      { kind: 'failed' },
      'up refuses the refs the evacuation would push (dry run): fatal: x',
      `allow pushes to refs/heads/handoff/* and refs/handoff/* for the daemon's user; see ${DOC}`,
    ],
    [
      'no answer',
      { step: 'answer', kind: 'unreachable' },
      'up does not answer: fatal: x',
      `check the remote's URL and the network from the daemon's environment; see ${DOC}`,
    ],
  ])('%s', (_what, over, cause, fix) => {
    expect(blockedWayOut({ ...failure, ...over })).toEqual({ cause, fix });
  });
});

describe('wayOutSentence: what is claimed, only as far as a rehearsal proved it', () => {
  const blocked: WayOut = { state: 'blocked', checked_at: null, cause: null, fix: null, remote: 'origin', proven: [] };

  it('a blocked way out without a recorded cause or fix still says it is blocked and by when to fix it', () => {
    expect(wayOutSentence(blocked, VIEW)).toBe('way out: BLOCKED — the rehearsal failed; fix before 85 %');
    expect(wayOutSentence(blocked, 'short')).toBe('way out BLOCKED (handoff status)');
  });

  it('a proven way out checked at an unknown time names no age', () => {
    expect(wayOutSentence({ ...blocked, state: 'proven', proven: ['answers'] }, VIEW)).toBe('way out: proven (origin, answers)');
  });

  it('an unknown way out that was checked says when, and its cause or that nothing was rehearsed', () => {
    const checked: WayOut = { ...UNKNOWN_WAY_OUT, checked_at: new Date(T0).toISOString(), cause: 'the rehearsal was cut short' };
    expect(wayOutSentence(checked, VIEW)).toBe('way out: unknown (checked 2 min ago) — the rehearsal was cut short');
    expect(wayOutSentence({ ...UNKNOWN_WAY_OUT, cause: null }, VIEW)).toBe('way out: unknown — not rehearsed yet');
    expect(wayOutSentence(UNKNOWN_WAY_OUT, VIEW)).toBe('way out: unknown — not rehearsed yet (PREPARE rehearses the evacuation; `handoff doctor` does it now)');
  });
});
