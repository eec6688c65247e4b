import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git } from '../support/git.js';
import { agentOrSkip, VERSIONS, type InstalledAgent } from './support/agent-install.js';
import { answersFunctionCall, functionResponses, startGeminiMock, type GeminiTurn } from './support/mock-gemini.js';
import type { MockProvider } from './support/mock-server.js';
import { run, startScene, type Scene } from './support/scene.js';

/**
 * Gemini CLI (versions.json) against a Gemini API mock (GOOGLE_GEMINI_BASE_URL), through `gemini -p`.
 *
 * What the real agent does, found here:
 * - Headless runs refuse an untrusted folder (exit 55) unless `~/.gemini/trustedFolders.json` trusts it,
 *   as a user who trusted the repository once in the TUI has.
 * - A 429 whose QuotaFailure names a per-day quota id is a TerminalQuotaError: not retried, the run
 *   ends with an error. The telemetry outfile gets a `gemini_cli.api_error` record with `status_code`
 *   and `http.status_code` 429 and `error.type: "ApiError"` (not the class name it printed).
 * - The outfile is large: every record carries the resource attributes (command line included), about
 *   160 KB per short session. The session file (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, JSON
 *   lines with `$set` updates, not the `session-*.json` of older versions) is not written for a run that
 *   ended on the quota error.
 * - Hooks (BeforeAgent, BeforeTool, SessionStart) run in headless mode; `additionalContext` reaches the
 *   model in the request's `contents`.
 */

let agent: InstalledAgent | undefined;
let mock: MockProvider;
let scene: Scene;
let telemetryLog: string;
let answer: GeminiTurn = { text: 'done' };
let nextTool: { tool: string; args: Record<string, unknown> } | null = null;

beforeAll(async () => {
  agent = await agentOrSkip('gemini-cli');
  if (!agent) return;
  mock = await startGeminiMock((request) => (nextTool && !answersFunctionCall(request) ? nextTool : answer));
  // The daemon tails the outfile Gemini CLI writes (gemini.telemetry_outfiles), as docs/agents/gemini.md tells a user to set.
  scene = await startScene({ GEMINI_API_KEY: 'mock-not-a-key', GOOGLE_GEMINI_BASE_URL: mock.url }, ({ home, repo }) => ({
    gemini: { telemetry_outfiles: [{ outfile: join(home, 'gemini-telemetry.log'), repo }] },
  }));
  mkdirSync(join(scene.home, '.gemini'));
  telemetryLog = join(scene.home, 'gemini-telemetry.log');
  writeFileSync(
    join(scene.home, '.gemini', 'settings.json'),
    JSON.stringify({
      security: { auth: { selectedType: 'gemini-api-key' } },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      privacy: { usageStatisticsEnabled: false },
      // Local file telemetry only: the source of the api_error records the daemon reads.
      telemetry: { enabled: true, target: 'local', otlpEndpoint: '', outfile: telemetryLog },
    }),
  );
  writeFileSync(join(scene.home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [scene.repo]: 'TRUST_FOLDER' }));
  const installed = await scene.handoff(['install', 'gemini']);
  expect(installed.code, installed.stderr).toBe(0);
}, 300_000);

afterAll(async () => {
  await scene?.stop();
  await mock?.close();
});

const gemini = (prompt: string, extra: readonly string[] = []) =>
  run(agent?.bin ?? '', ['-m', 'gemini-2.5-flash', ...extra, '-p', prompt], { cwd: scene.repo, env: scene.env });
const sentSince = (before: number) =>
  mock.requests
    .slice(before)
    .map((r) => JSON.stringify(r.body))
    .join('\n');

/** The outfile is one pretty-printed JSON record after another. */
const records = (text: string) => text.split(/\n(?=\{\n)/).map((record) => JSON.parse(record) as { attributes?: Record<string, unknown> });

describe.sequential(`Gemini CLI ${VERSIONS['gemini-cli'].version}, end to end`, () => {
  // Gemini CLI reports no percentage, so PREPARE is entered by hand here, as an operator would.
  it('the PREPARE notice reaches the model through the BeforeAgent hook', async (ctx) => {
    if (!agent) return ctx.skip();
    expect((await scene.handoff(['prepare', '--reason', 'agents suite'])).code).toBe(0);
    const before = mock.requests.length;
    const result = await gemini('carry on');
    expect(result.code, result.stderr).toBe(0);
    expect(sentSince(before)).toMatch(/<hook_context>session-handoff: \S+ is in PREPARE/);
  }, 120_000);

  it('a per-day quota 429 ends the run; the daemon tails the api_error record it wrote: a warning that does not recover, EVACUATE', async (ctx) => {
    if (!agent) return ctx.skip();
    answer = { quotaExhausted: true };
    const result = await gemini('say hi');
    answer = { text: 'done' };
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('TerminalQuotaError');
    const errors = records(readFileSync(telemetryLog, 'utf8')).filter((r) => r.attributes?.['event.name'] === 'gemini_cli.api_error');
    expect(errors).toHaveLength(1);
    expect(errors[0]?.attributes).toMatchObject({ status_code: 429, 'http.status_code': 429, 'error.type': 'ApiError' });
    // Nobody runs a command: the tail reads the record, and the daily quota is a limit that waiting does not lift.
    await scene.untilState('EVACUATE');
    expect((await scene.status())['warnings']).toEqual([expect.objectContaining({ source: 'gemini-telemetry', kind: 'insufficient_quota', recovers: false })]);
    // The whole outfile, past a request body, still goes through `ingest --file` (in chunks of whole records).
    expect(readFileSync(telemetryLog).length).toBeGreaterThan(64 * 1024);
    const ingested = await scene.handoff(['ingest', 'gemini-telemetry', '--file', telemetryLog, '--json']);
    expect(ingested.code, ingested.stdout).toBe(0);
  }, 120_000);

  it('at HANDOFF_READY the BeforeTool guard denies write_file even in yolo mode; the file is not written; the pickup reaches the model', async (ctx) => {
    if (!agent) return ctx.skip();
    // Gemini's hooks (BeforeAgent) said a session was at work: the drain waits for its atomic step, and
    // the agent says it is done (`handoff drained`, what the EVACUATE notice asks of it).
    expect(((await scene.status())['cycle'] as { drain: { waited: unknown } }).drain.waited).toBeNull();
    expect((await scene.handoff(['drained'])).code).toBe(0);
    await scene.untilState('HANDOFF_READY');
    const cycle = String(((await scene.status())['cycle'] as { id: string }).id);
    const file = join(scene.repo, 'notes.md');
    const tree = git(scene.repo, 'status', '--porcelain', '--untracked-files=all');
    nextTool = { tool: 'write_file', args: { file_path: file, content: 'written by a session without the lease\n' } };
    const before = mock.requests.length;
    // yolo: Gemini CLI's own approval would not stop the edit; the guard must be what stops it.
    const result = await gemini('write the notes', ['--approval-mode', 'yolo']);
    nextTool = null;
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect(git(scene.repo, 'status', '--porcelain', '--untracked-files=all')).toBe(tree);
    const refused = [...new Set(functionResponses(mock.requests.slice(before)))];
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatch(/is in HANDOFF_READY: .*No session may change files now/);
    expect(sentSince(before)).toContain(`handoff accept ${cycle} --as`);
  }, 120_000);
});
