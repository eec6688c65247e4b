import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';
import { piped } from './ingest-support.js';

let daemon: DaemonProcess;
beforeAll(async () => {
  daemon = await startDaemon(undefined, { CODEX_HOME: tempDir('codex') });
});
afterAll(async () => {
  await daemon.stop();
});

const CORPUS = new URL('../fixtures/telemetry/', import.meta.url);
const corpus = (path: string) => readFileSync(new URL(path, CORPUS), 'utf8');

interface Report {
  state: string;
  recorded: { metric: string; used_percent: number }[];
  warnings: { warning: { kind: string; recovers: boolean | null; source: string }; code: string }[];
  unknown: { metric: string; reason: string }[];
  skipped_lines: { line: number; reason: string }[];
}

const ingest = async (adapter: string, input: string, args: readonly string[] = [], cwd?: string) => {
  const run = await piped(['--state-dir', daemon.stateDir, 'ingest', adapter, '--json', ...args], input, cwd === undefined ? {} : { cwd });
  return { ...run, envelope: JSON.parse(run.stdout) as { code: string; data: Report; error?: { message: string } } };
};

const state = async (repo: string) => String((await cli(daemon.stateDir, ['status', '--json'], repo)).json.data?.['state']);

/** Gemini CLI's file exporter record of a 429, written now (a record from long ago is history, not news). */
function geminiApiError(now: Date): string {
  const record = JSON.parse(corpus('gemini/telemetry.log').split('\n}\n')[1] + '\n}') as { attributes: Record<string, unknown>; hrTime: number[] };
  record.attributes['event.timestamp'] = now.toISOString();
  record.hrTime = [Math.floor(now.getTime() / 1000), 0];
  return `${JSON.stringify(record, null, 2)}\n`;
}

describe('429 bodies through handoff ingest', () => {
  it.each([
    ['openai-headers', 'http/openai.429.quota.headers-and-body.txt', 'insufficient_quota', 'after the headers'],
    ['openai-headers', 'http/openai.429.quota.headers-and-body.txt', 'insufficient_quota', 'alone'],
    ['anthropic-headers', 'http/anthropic.429.spend-cap.headers-and-body.txt', 'spend_cap', 'after the headers'],
    ['anthropic-headers', 'http/anthropic.429.spend-cap.headers-and-body.txt', 'spend_cap', 'alone'],
  ])('%s %s: %s body %s → a warning that does not recover, EVACUATE', async (adapter, file, kind, where) => {
    const repo = tempRepo();
    const text = corpus(file);
    const payload = where === 'alone' ? text.slice(text.indexOf('\r\n\r\n') + 4) : text;
    const { code, envelope } = await ingest(adapter, payload, ['--repo', repo]);
    expect(code).toBe(0);
    expect(envelope.data.warnings.map((w) => [w.warning.kind, w.warning.recovers])).toEqual([[kind, false]]);
    expect(envelope.data.state).toBe('EVACUATE');
  });
});

describe('Gemini CLI telemetry', () => {
  it('a 429 api_error record in the telemetry log moves the repository to EVACUATE (ingested from the project directory)', async () => {
    const repo = tempRepo();
    mkdirSync(join(repo, '.gemini'));
    const log = join(repo, '.gemini', 'telemetry.log');
    // A response first: its token counts are never a percentage, so nothing moves.
    writeFileSync(log, `${corpus('gemini/telemetry.log').split('\n}\n')[0]}\n}\n`);
    let run = await ingest('gemini-telemetry', '', ['--file', log], repo);
    expect(run.envelope.data).toMatchObject({ state: 'NORMAL', recorded: [], warnings: [] });
    writeFileSync(log, geminiApiError(new Date()), { flag: 'a' });
    run = await ingest('gemini-telemetry', '', ['--file', log], repo);
    expect(run.code).toBe(0);
    expect(run.envelope.data.warnings.map((w) => [w.warning.source, w.warning.kind])).toEqual([['gemini-telemetry', 'rate_limit']]);
    // The warning started the evacuation; with no agent session seen working, the drain runs at once.
    expect(['EVACUATE', 'HANDOFF_READY']).toContain(await state(repo));
  });
});

describe('a real-sized Gemini CLI outfile through handoff ingest --file', () => {
  it('821 KB of pretty-printed records, some each over a body: sent in whole records, the daily quota 429 at the end moves the repository', async () => {
    const repo = tempRepo();
    const now = new Date();
    // Gemini CLI 0.61's own api_request and api_error records (a daily quota), moved to now.
    const [request, apiError] = corpus('gemini/telemetry-0.61.api-error-per-day.log')
      .split(/\n(?=\{\n)/)
      .map((text) => {
        const record = JSON.parse(text) as { attributes: Record<string, unknown>; hrTime: number[]; hrTimeObserved: number[] };
        record.attributes['event.timestamp'] = now.toISOString();
        record.hrTime = record.hrTimeObserved = [Math.floor(now.getTime() / 1000), 0];
        return JSON.stringify(record, null, 2);
      });
    // Inference details repeat the system prompt: each of those records is larger than one request body.
    const details = JSON.stringify(
      { attributes: { 'event.name': 'gen_ai.client.inference.operation.details', 'gen_ai.system_instructions': 'x'.repeat(70_000) } },
      null,
      2,
    );
    const records: string[] = [];
    while (records.join('\n').length < 821_000) records.push(request ?? '', details);
    records.push(apiError ?? '');
    const log = join(tempDir('gemini-outfile'), 'telemetry.log');
    writeFileSync(log, `${records.join('\n')}\n`);
    const run = await ingest('gemini-telemetry', '', ['--file', log, '--repo', repo]);
    expect(run.code, run.stdout).toBe(0);
    const data = run.envelope.data as Report & { chunks: number; oversized_lines: number[] };
    expect(data.warnings.map((w) => [w.warning.kind, w.warning.recovers])).toEqual([['insufficient_quota', false]]);
    expect(data.chunks).toBeGreaterThan(1);
    expect(data.oversized_lines).toHaveLength(records.filter((r) => r === details).length);
    expect(data.skipped_lines).toEqual([]);
    expect(['EVACUATE', 'HANDOFF_READY']).toContain(await state(repo));
  });
});

describe('one bad field, one bad line', () => {
  it('a status line with one mistyped field: the hook still prints what it read, and 91 % counts', async () => {
    const repo = tempRepo();
    const payload = JSON.stringify({
      cwd: repo,
      session_id: 'bad-field',
      context_window: { used_percentage: '9x' },
      rate_limits: { five_hour: { used_percentage: 91, resets_at: Math.floor(Date.now() / 1000) + 3600 } },
    });
    const run = await piped(['hook', 'claude-statusline', '--state-dir', daemon.stateDir], payload);
    expect(run.stdout).toBe('handoff EVACUATE · 5h 91%\n');
    expect(await state(repo)).toBe('EVACUATE');
  });

  it('a legacy Codex rollout is an older format with no usage data, not a schema error', async () => {
    const repo = tempRepo();
    const { envelope } = await ingest('codex-rollout', corpus('codex/rollout-legacy-2025-07.jsonl'), ['--repo', repo]);
    expect(envelope.code).toBe('ingested');
    expect(envelope.data.unknown.map((u) => u.reason)).toEqual([
      expect.stringMatching(/^an older Codex format with no usage data/),
      expect.stringMatching(/^an older Codex format/),
    ]);
    const alone = await ingest('codex-rollout', corpus('codex/rollout-legacy-2025-07.jsonl'));
    expect(alone.envelope.error?.message).toMatch(/holds nothing to record: an older Codex format with no usage data/);
  });
});
