import { describe, expect, it } from 'vitest';
import { parseHookArgs } from '../../../daemon/cli/hook-entry.js';
import { hookStateDir } from '../../../daemon/cli/hooks/daemon-address.js';
import { guardVerdict } from '../../../daemon/cli/hooks/guard-verdict.js';
import { handoffPointer } from '../../../daemon/cli/hooks/handoff-pointer.js';
import { envelopeOf, type DaemonAnswer } from '../../../daemon/cli/hooks/lean-client.js';
import { joinStatus, statusText } from '../../../daemon/cli/hooks/status-text.js';
import { resolveStateDir } from '../../../daemon/store/index.js';

const answer = (code: string, data: Record<string, unknown> | null, error?: { message: string; hint: string }): DaemonAnswer => ({
  kind: 'answer',
  envelope: { code, data, ...(error && { error }) },
});

const reading = (metric: string, used_percent: number | null) => ({ metric, used_percent });

describe('statusText', () => {
  it('state, the fullest quota window and the context', () => {
    const data = { state: 'PREPARE', recorded: [reading('five_hour', 82), reading('seven_day', 41.25)], unchanged: [reading('context', 59)] };
    expect(statusText(answer('ingested', data))).toBe('handoff PREPARE · 5h 82% · ctx 59%');
    expect(statusText(answer('ingested', { state: 'NORMAL', recorded: [reading('seven_day', 88.06)], unchanged: [] }))).toBe('handoff NORMAL · 7d 88.1%');
    expect(statusText(answer('ingested', { state: 'NORMAL', recorded: [], unchanged: [] }))).toBe('handoff NORMAL');
  });

  it('adds the way out once PREPARE rehearsed it, a blocked one pointing at `handoff status`', () => {
    const wayOut = (state: string) => ({ state, checked_at: null, cause: null, fix: null, remote: 'origin', proven: [] });
    const data = (state: string) => ({ state: 'PREPARE', recorded: [reading('five_hour', 82)], unchanged: [], way_out: wayOut(state) });
    expect(statusText(answer('ingested', data('blocked')))).toBe('handoff PREPARE · 5h 82% · way out BLOCKED (handoff status)');
    expect(statusText(answer('ingested', data('proven')))).toBe('handoff PREPARE · 5h 82% · way out proven');
    expect(statusText(answer('ingested', data('unknown')))).toBe('handoff PREPARE · 5h 82%');
  });

  it('says what went wrong in a few words', () => {
    expect(statusText({ kind: 'down', reason: 'ENOENT' })).toBe('handoff: daemon down');
    expect(statusText({ kind: 'timeout' })).toBe('handoff: daemon not answering');
    expect(statusText(answer('not_a_repository', null, { message: 'm', hint: 'h' }))).toBe('handoff: not in a git repository');
    expect(statusText(answer('body_too_large', null, { message: 'm', hint: 'h' }))).toBe('handoff: body too large');
  });

  it('joins the chained line first and keeps one row', () => {
    expect(joinStatus('mine\r\n', 'handoff NORMAL')).toBe('mine | handoff NORMAL');
    expect(joinStatus(null, 'handoff NORMAL')).toBe('handoff NORMAL');
    expect(joinStatus('  ', 'handoff NORMAL')).toBe('handoff NORMAL');
  });
});

describe('guardVerdict', () => {
  const status = (state: string, holder: string | null) =>
    answer('status', { workspace: '/repo', state, cycle: { id: '20261129T081500Z-k3f9qa' }, lease: { holder: holder === null ? null : { executor: holder } } });

  it.each(['EVACUATE', 'HANDOFF_READY', 'TAKEOVER', 'RETURN_HANDOFF_READY'])('denies a non-holder in %s with the reason', (state) => {
    const verdict = guardVerdict('me', status(state, 'them'));
    expect(verdict.allow).toBe(false);
    expect(!verdict.allow && verdict.reason).toMatch(
      new RegExp(`/repo is in ${state}: .*This session \\(me\\) does not hold its lease \\(the lease is held by 'them'\\)`),
    );
  });

  it('names the cycle where the next step needs it, and says when nobody holds the lease', () => {
    const verdict = guardVerdict(null, status('HANDOFF_READY', null));
    expect(!verdict.allow && verdict.reason).toMatch(
      /session \(unknown\) does not hold its lease \(nobody holds the lease\).*\.session-handoff\/20261129T081500Z-k3f9qa\/HANDOFF\.md/,
    );
  });

  it('prints the accept command that works where the reason is read: the real cycle, its remote, no placeholder', () => {
    const travelling = (state: string) =>
      answer('status', { workspace: '/repo', state, cycle: { id: '20261129T081500Z-k3f9qa', remote: { name: 'origin' } }, lease: { holder: null } });
    const out = guardVerdict('me', travelling('HANDOFF_READY'));
    expect(!out.allow && out.reason).toContain('`handoff accept 20261129T081500Z-k3f9qa --from origin` in a clone of this repository');
    const back = guardVerdict('me', status('RETURN_HANDOFF_READY', 'them'));
    expect(!back.allow && back.reason).toContain('the primary takes it with `handoff accept 20261129T081500Z-k3f9qa --return`.');
    expect(!back.allow && back.reason).not.toMatch(/EXECUTOR|CYCLE/);
  });

  it.each(['NORMAL', 'PREPARE', 'CLOSED'])('allows everyone in %s', (state) => {
    expect(guardVerdict('me', status(state, 'them'))).toEqual({ allow: true, note: null });
  });

  it('allows the holder', () => {
    expect(guardVerdict('me', status('EVACUATE', 'me'))).toEqual({ allow: true, note: null });
  });

  it("follows the daemon's edit policy: nobody edits a frozen source, not even its holder", () => {
    const frozen = answer('status', {
      workspace: '/repo',
      state: 'HANDOFF_READY',
      cycle: { id: '20261129T081500Z-k3f9qa' },
      lease: { holder: { executor: 'me' } },
      edit_policy: { who: 'nobody', why: 'the work is handed off and frozen until a receiver accepts it' },
    });
    const verdict = guardVerdict('me', frozen);
    expect(verdict.allow).toBe(false);
    expect(!verdict.allow && verdict.reason).toMatch(/handed off and frozen.*No session may change files now/);
    const offline = answer('status', {
      workspace: '/repo',
      state: 'TAKEOVER',
      cycle: null,
      lease: { holder: { executor: 'me' } },
      edit_policy: { who: 'nobody', why: 'the lease could not be verified on the remote since 2026-11-29T08:00:00.000Z; edits wait until it can' },
    });
    expect(!guardVerdict('me', offline).allow && (guardVerdict('me', offline) as { reason: string }).reason).toMatch(
      /could not be verified on the remote since/,
    );
  });

  it('allows, with a note, when it cannot know', () => {
    expect(guardVerdict('me', { kind: 'down', reason: 'x' })).toEqual({ allow: true, note: 'handoff: daemon down; the lease guard is not enforcing' });
    expect(guardVerdict('me', { kind: 'timeout' }).allow).toBe(true);
    expect(guardVerdict('me', answer('not_a_repository', null, { message: 'm', hint: 'h' }))).toEqual({ allow: true, note: null });
    expect(guardVerdict('me', answer('unauthorized', null, { message: 'wrong bearer token', hint: 'h' }))).toEqual({
      allow: true,
      note: 'handoff: wrong bearer token',
    });
  });
});

describe('handoffPointer', () => {
  it('points a new session at HANDOFF.md and the accept command, or the return accept', () => {
    const out = handoffPointer('HANDOFF_READY', '/repo', 'C1', 's-1');
    expect(out).toContain('.session-handoff/C1/HANDOFF.md');
    expect(out).toContain('handoff accept C1 --as s-1');
    // Without a session id the accept takes its default executor: the command runs as printed, no placeholder.
    expect(handoffPointer('RETURN_HANDOFF_READY', '/repo', 'C1', null)).toContain('take it back into this work tree: handoff accept C1 --return\n');
    expect(Buffer.byteLength(out ?? '')).toBeLessThan(1024);
  });

  it.each(['NORMAL', 'PREPARE', 'EVACUATE', 'TAKEOVER', 'CLOSED'])('says nothing in %s', (state) => {
    expect(handoffPointer(state, '/repo', 'C1', 's')).toBeNull();
  });
});

describe('parseHookArgs', () => {
  it('takes the name, --state-dir and --chain, also as --flag=value', () => {
    expect(parseHookArgs(['claude-statusline', '--state-dir', '/s', '--chain', 'a --b=c'])).toEqual({
      name: 'claude-statusline',
      stateDir: '/s',
      chain: 'a --b=c',
    });
    expect(parseHookArgs(['claude-guard', '--state-dir=/s=x'])).toEqual({ name: 'claude-guard', stateDir: '/s=x', chain: undefined });
  });

  it.each([[[]], [['--chain', 'x']], [['claude-guard', '--json']], [['claude-guard', '--state-dir']]])('refuses %j', (argv) => {
    expect(typeof parseHookArgs(argv)).toBe('string');
  });
});

describe('hookStateDir', () => {
  it.each([
    [{}],
    [{ HANDOFF_STATE_DIR: '/explicit' }],
    [{ HANDOFF_STATE_DIR: '', XDG_STATE_HOME: '/xdg' }],
    [{ XDG_STATE_HOME: 'relative' }],
    [{ XDG_STATE_HOME: '' }],
  ])('finds the same dir as the store for %j', (env) => {
    expect(hookStateDir(env, '/home/u')).toBe(resolveStateDir(env, '/home/u'));
  });
});

describe('envelopeOf', () => {
  const http = (head: string, body: string) => `${head}\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n${body}`;

  it('reads the Envelope after the head of an HTTP/1.1 answer', () => {
    expect(envelopeOf(http('HTTP/1.1 200 OK', '{"code":"ingested","data":{"state":"NORMAL"},"authority":"none"}'))).toEqual({
      code: 'ingested',
      data: { state: 'NORMAL' },
      authority: 'none',
    });
  });

  it.each([
    ['not HTTP', 'SSH-2.0-OpenSSH\r\n\r\n{}'],
    ['no end of head', 'HTTP/1.1 200 OK\r\ncontent-length: 2'],
    ['a chunked body', 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n'],
    ['a body that is not an Envelope', http('HTTP/1.1 200 OK', '{"hello":1}')],
    ['a body that is not JSON', http('HTTP/1.1 502 Bad Gateway', '<html>')],
  ])('refuses %s', (_what, response) => {
    expect(envelopeOf(response)).toBeNull();
  });
});
