import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, cli, startDaemon, until, type DaemonProcess } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';
import { codexSessionMeta, codexTokenCount, fixtureText, piped, statuslinePayload } from './ingest-support.js';

let daemon: DaemonProcess;
beforeAll(async () => {
  // An empty CODEX_HOME: the daemon must not tail this machine's real Codex sessions.
  daemon = await startDaemon(undefined, { CODEX_HOME: tempDir('codex') });
});
afterAll(async () => {
  await daemon.stop();
});

interface Report {
  workspace: string;
  state: string;
  recorded: { metric: string; used_percent: number; executor: string | null; raw_sha256: string }[];
  unchanged: { metric: string }[];
  not_credible: { reading: { metric: string }; reason: string }[];
  unknown: { metric: string; reason: string }[];
  warnings: { warning: { kind: string }; code: string }[];
  events: { name: string }[];
  route: { by: string; session_id: string | null };
  chunks?: number;
}

const ingest = async (adapter: string, input: string, ...args: string[]) => {
  const run = await piped(['--state-dir', daemon.stateDir, 'ingest', adapter, '--json', ...args], input);
  return { ...run, envelope: JSON.parse(run.stdout) as { code: string; data: Report; error?: { message: string; hint: string } } };
};

/** The journal's records of `repo` (another test's workspace, its drain still at work, writes its own meanwhile). */
const journalLines = (repo: string) =>
  readFileSync(join(daemon.stateDir, 'journal.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.includes(JSON.stringify(repo))).length;

describe('handoff ingest against a real daemon', () => {
  it('a status line with 93 % five_hour moves the repository to EVACUATE and lists what it recorded', async () => {
    const repo = tempRepo();
    const payload = statuslinePayload(repo, 93);
    const { code, envelope } = await ingest('claude-statusline', payload);
    expect(code).toBe(0);
    expect(envelope.code).toBe('ingested');
    expect(envelope.data).toMatchObject({ workspace: repo, state: 'EVACUATE', route: { by: 'payload', session_id: '3f0c9a52-7d1e-4b6a-9c2e-5a1b8f0d4e21' } });
    expect(envelope.data.recorded.map((r) => [r.metric, r.used_percent])).toEqual([
      ['context', 59],
      ['five_hour', 93],
      ['seven_day', 41.2],
    ]);
    // Provenance: the exact payload bytes and the session that reported them.
    const { createHash } = await import('node:crypto');
    expect(envelope.data.recorded[0]?.raw_sha256).toBe(createHash('sha256').update(payload).digest('hex'));
    expect(envelope.data.recorded[0]?.executor).toBe('3f0c9a52-7d1e-4b6a-9c2e-5a1b8f0d4e21');
    const status = await cli(daemon.stateDir, ['status', '--json'], repo);
    expect(status.json.data).toMatchObject({ state: 'EVACUATE', pressure: { percent: 93, metric: 'five_hour', source: 'claude-statusline' } });
  });

  it('a status line with null percentages records nothing, moves nothing and says what is unknown', async () => {
    const repo = tempRepo();
    const payload = fixtureText('claude-statusline/apikey-first-render.json').replaceAll('/home/dev/acme-api', repo);
    const { envelope } = await ingest('claude-statusline', payload);
    expect(envelope.data).toMatchObject({ state: 'NORMAL', recorded: [], not_credible: [] });
    expect(envelope.data.unknown.map((u) => u.metric)).toEqual(['context', 'five_hour', 'seven_day']);
    expect((await cli(daemon.stateDir, ['status', '--json'], repo)).json.data).toMatchObject({ state: 'NORMAL', readings: [] });
  });

  it('the same numbers again within a minute are not journaled again', async () => {
    const repo = tempRepo();
    const now = Math.floor(Date.now() / 1000);
    const payload = statuslinePayload(repo, 50, { now });
    expect((await ingest('claude-statusline', payload)).envelope.data.recorded).toHaveLength(3);
    // Readings that move nothing reach the journal at the next coalesced write (readings_flush_seconds):
    // counted once it came, or it would land between the two counts whenever it fell there.
    const before = await until('the first readings written', async () => (journalLines(repo) > 0 ? journalLines(repo) : undefined));
    const again = await ingest('claude-statusline', payload);
    expect(again.envelope.data.recorded).toEqual([]);
    expect(again.envelope.data.unchanged.map((r) => r.metric)).toEqual(['context', 'five_hour', 'seven_day']);
    expect(journalLines(repo)).toBe(before);
    // A changed number is recorded at once.
    const changed = await ingest('claude-statusline', statuslinePayload(repo, 82, { now }));
    expect(changed.envelope.data).toMatchObject({ state: 'PREPARE', recorded: [{ metric: 'five_hour', used_percent: 82 }] });
    expect(changed.envelope.data.unchanged.map((r) => r.metric)).toEqual(['context', 'seven_day']);
  });

  it("an unparsable payload is refused with the adapter's message (65) and changes nothing", async () => {
    const repo = tempRepo();
    const { code, envelope } = await ingest('claude-statusline', '{"cwd": "', '--repo', repo);
    expect(code).toBe(65);
    expect(envelope.code).toBe('invalid_body');
    expect(envelope.error?.message).toMatch(/^claude-statusline: the payload is not valid JSON/);
    // A wrong type costs only its own metric, never the payload: it is unknown, with the reason.
    const wrongType = await ingest('claude-statusline', JSON.stringify({ cwd: repo, rate_limits: { five_hour: { used_percentage: 'ninety-three' } } }));
    expect(wrongType.code).toBe(0);
    expect(wrongType.envelope.data.unknown).toContainEqual({
      metric: 'five_hour',
      reason: 'rate_limits.five_hour.used_percentage is not a number ("ninety-three")',
    });
    expect((await cli(daemon.stateDir, ['status', '--json'], repo)).json.data).toMatchObject({ state: 'NORMAL', readings: [] });
  });

  it('a payload without a cwd needs --repo (64); with it, header readings keep their adapter and reasons', async () => {
    const repo = tempRepo();
    const headers = fixtureText('http/anthropic.api-key.200.headers.txt');
    const unrouted = await ingest('anthropic-headers', headers);
    expect(unrouted.code).toBe(64);
    expect(unrouted.envelope.code).toBe('usage_error');
    expect(unrouted.envelope.error?.message).toMatch(/names no working directory/);
    expect(unrouted.envelope.error?.hint).toMatch(/--repo DIR/);
    const routed = await ingest('anthropic-headers', headers, '--repo', repo);
    expect(routed.code).toBe(0);
    expect(routed.envelope.data.route.by).toBe('repo');
    // The fixture's reset times lie in the past: observed, but not counted, and said why.
    expect(routed.envelope.data.not_credible.map((n) => [n.reading.metric, n.reason])).toEqual([
      ['requests', 'window_reset_passed'],
      ['tokens', 'window_reset_passed'],
    ]);
  });

  it('an unknown adapter is refused (65) with the list of adapters', async () => {
    const repo = tempRepo();
    const { code, envelope } = await ingest('gemini', '{}', '--repo', repo);
    expect(code).toBe(65);
    expect(envelope.error?.message).toMatch(/params\.adapter must be one of claude-statusline, claude-hook, codex-rollout/);
  });

  it('a Claude StopFailure on a rate limit is a provider warning: EVACUATE', async () => {
    const repo = tempRepo();
    const payload = fixtureText('claude-hooks/StopFailure.rate_limit.json').replaceAll('/home/dev/acme-api', repo);
    const { envelope } = await ingest('claude-hook', payload);
    expect(envelope.data).toMatchObject({
      state: 'EVACUATE',
      warnings: [{ warning: { kind: 'rate_limit' }, code: 'warning_recorded' }],
      events: [{ name: 'StopFailure' }],
    });
  });

  it('a Codex zero placeholder in a later payload does not clear real pressure', async () => {
    const repo = tempRepo();
    const session = 'codex-session-zero';
    const first = await ingest('codex-rollout', `${codexSessionMeta(repo, session)}\n${codexTokenCount(85, 30)}\n`);
    expect(first.envelope.data.state).toBe('PREPARE');
    // 0 % with shifted resets, before the earlier window's reset, from the same session.
    const zero = await ingest('codex-rollout', `${codexSessionMeta(repo, session)}\n${codexTokenCount(0, 0, new Date(), 7200)}\n`);
    expect(zero.envelope.data.not_credible.map((n) => [n.reading.metric, n.reason])).toEqual([
      ['five_hour', 'zero_placeholder'],
      ['weekly', 'zero_placeholder'],
    ]);
    expect(zero.envelope.data.state).toBe('PREPARE');
    const status = await cli(daemon.stateDir, ['status', '--json'], repo);
    expect(status.json.data).toMatchObject({ state: 'PREPARE', pressure: { percent: 85, metric: 'five_hour' } });
  });

  it('a Codex rollout file larger than one body goes in whole-line chunks, keeping its session and repository', async () => {
    const repo = tempRepo();
    const session = '019d0a8b-chunked';
    const filler = JSON.stringify({ timestamp: new Date().toISOString(), type: 'response_item', payload: { type: 'message', content: 'x"'.repeat(2000) } });
    const lines = [codexSessionMeta(repo, session), ...Array.from({ length: 60 }, () => filler), codexTokenCount(93, 40)];
    const file = join(tempDir('rollout'), 'rollout-big.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    expect(readFileSync(file).length).toBeGreaterThan(200 * 1024);
    const { code, envelope } = await ingest('codex-rollout', '', '--file', file);
    expect(code).toBe(0);
    expect(envelope.data.chunks).toBeGreaterThan(1);
    expect(envelope.data).toMatchObject({ workspace: repo, state: 'EVACUATE' });
    expect(envelope.data.recorded.map((r) => [r.metric, r.used_percent, r.executor])).toEqual([
      ['five_hour', 93, session],
      ['weekly', 40, session],
    ]);
  });

  it('the HTTP route validates its body and answers with the Envelope', async () => {
    const repo = tempRepo();
    const missing = await api(daemon, 'POST', '/v1/ingest/claude-statusline', { repo });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ code: 'invalid_body', authority: 'none' });
    expect(missing.body.error?.message).toMatch(/missing 'payload'/);
    const ok = await api(daemon, 'POST', '/v1/ingest/claude-statusline', { payload: statuslinePayload(repo, 10) });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ code: 'ingested', authority: 'none', data: { state: 'NORMAL' } });
  });

  it('human output names each reading and what became of it', async () => {
    const repo = tempRepo();
    const run = await piped(['--state-dir', daemon.stateDir, 'ingest', 'claude-statusline'], statuslinePayload(repo, null));
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^ingested into ${repo} \\(state NORMAL\\)`));
    expect(run.stdout).toMatch(/recorded\s+context 59 %/);
    expect(run.stdout).toMatch(/unknown\s+five_hour: rate_limits\.five_hour\.used_percentage is null/);
  });
});
