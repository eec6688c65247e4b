import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentOrSkip, VERSIONS, type InstalledAgent } from './support/agent-install.js';
import { doctorOf, expectGuardAtHandoffReady, expectPrepareNotice, type ChatAgentRig } from './support/chat-agent-checks.js';
import { answersToolCall, startChatCompletionsMock, type ChatTurn } from './support/mock-chat-completions.js';
import type { MockProvider } from './support/mock-server.js';
import { run, startScene, type Scene } from './support/scene.js';

/**
 * Qwen Code (versions.json) against an OpenAI-compatible chat-completions mock, through
 * `qwen "…" --auth-type openai --openai-base-url … --yolo -o stream-json`.
 *
 * What the real agent does, found here:
 * - User hooks in `~/.qwen/settings.json` run headless, with no folder trust: Claude Code's payload
 *   (plus `transcript_path`, `permission_mode`) and Claude's answers. SessionStart and
 *   UserPromptSubmit `hookSpecificOutput.additionalContext` reach the model (the second inside
 *   `<qwen:user-prompt-submit-context>`).
 * - A PreToolUse deny (matcher on the runtime id `write_file`) refuses the call even with `--yolo`; the
 *   model reads the reason as the tool's result and the run goes on.
 * - A 429 is retried for minutes (each attempt is three requests: its OpenAI client retries twice
 *   before Qwen logs the failure): `--max-wall-time` bounds the run (exit 55, and records not yet
 *   flushed to the outfile may be lost). Each attempt writes a `qwen-code.api_error` record
 *   (`status_code` 429, `error.type` "RateLimitError") and a `qwen-code.api_retry` to the telemetry
 *   outfile, in Gemini CLI's file-exporter layout.
 */

let agent: InstalledAgent | undefined;
let mock: MockProvider;
let scene: Scene;
let outfile: string;
let settings: string;
const next: ChatTurn = { text: 'done' };
/** How many of the next requests the mock refuses with a 429 before it answers again. */
let refusals = 0;
let tool: ChatTurn | null = null;

beforeAll(async () => {
  agent = await agentOrSkip('qwen-code');
  if (!agent) return;
  mock = await startChatCompletionsMock({
    next: (request) => {
      if (refusals > 0) {
        refusals -= 1;
        return { rateLimited: true };
      }
      return tool !== null && !answersToolCall(request) ? tool : next;
    },
  });
  // The daemon tails the outfile Qwen Code writes (qwen.telemetry_outfiles), as docs/agents/qwen.md tells a user to set.
  scene = await startScene({ OPENAI_API_KEY: 'mock-not-a-key', QWEN_CODE_SUPPRESS_YOLO_WARNING: '1' }, ({ home, repo }) => ({
    qwen: { telemetry_outfiles: [{ outfile: join(home, 'qwen-telemetry.log'), repo }] },
  }));
  outfile = join(scene.home, 'qwen-telemetry.log');
  settings = join(scene.home, '.qwen', 'settings.json');
  mkdirSync(join(scene.home, '.qwen'));
  // The user's own settings: local file telemetry (the source of the api_error records), no usage
  // statistics, no updates; no background memory agents or suggestions (each is more model calls per run).
  const userSettings = `${JSON.stringify(
    {
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      privacy: { usageStatisticsEnabled: false },
      memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false, enableAutoSkill: false },
      ui: { enableFollowupSuggestions: false },
      telemetry: { enabled: true, target: 'local', otlpEndpoint: '', outfile },
    },
    null,
    2,
  )}\n`;
  writeFileSync(settings, userSettings);
  const installed = await scene.handoff(['install', 'qwen']);
  expect(installed.code, installed.stderr).toBe(0);
}, 300_000);

afterAll(async () => {
  await scene?.stop();
  await mock?.close();
});

const qwen = (prompt: string, extra: readonly string[] = []) =>
  run(
    agent?.bin ?? '',
    [prompt, '--auth-type', 'openai', '--openai-base-url', `${mock.url}/v1`, '--model', 'mock-model', '--yolo', '-o', 'stream-json', ...extra],
    { cwd: scene.repo, env: scene.env, timeoutMs: 90_000 },
  );
const rig: ChatAgentRig = {
  get scene() {
    return scene;
  },
  get mock() {
    return mock;
  },
  run: (prompt) => qwen(prompt),
  setTool: (turn) => {
    tool = turn;
  },
};

describe.sequential(`Qwen Code ${VERSIONS['qwen-code'].version}, end to end`, () => {
  it('doctor: the hooks are live', async (ctx) => {
    if (!agent) return ctx.skip();
    expect(await doctorOf(scene, 'qwen')).toMatchObject({ live: true });
  }, 60_000);

  // Qwen Code reports no quota percentage, so PREPARE is entered by hand here, as an operator would.
  it('the PREPARE notice reaches the model through the UserPromptSubmit hook', async (ctx) => {
    if (!agent) return ctx.skip();
    await expectPrepareNotice(rig);
  }, 120_000);

  it('a 429 is retried (bounded by the wall-time cap) and logged; the daemon tails the api_error records: a provider warning, EVACUATE', async (ctx) => {
    if (!agent) return ctx.skip();
    // Refusals, then an answer: the run ends by itself, its records flushed (an aborted run may lose them).
    // Its OpenAI client retries a 429 twice on its own before Qwen sees (and logs) a failed attempt: 3 requests each.
    refusals = 7;
    const result = await qwen('say hi', ['--max-wall-time', '60s']);
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(outfile, 'utf8')).toMatch(/"event\.name": "qwen-code\.api_error"/);
    // Nobody runs a command: the tail reads the records.
    await scene.untilState('EVACUATE');
    // One warning per attempt Qwen logged: each a rate limit read from its outfile.
    const warnings = (await scene.status())['warnings'] as { source: string; kind: string }[];
    expect(warnings.length).toBeGreaterThan(0);
    for (const warning of warnings) expect(warning).toMatchObject({ source: 'qwen-telemetry', kind: 'rate_limit' });
  }, 120_000);

  it('at HANDOFF_READY the guard denies write_file even with --yolo; the reason reaches the model; the pickup reaches the model', async (ctx) => {
    if (!agent) return ctx.skip();
    await expectGuardAtHandoffReady(rig, (path) => ({ tool: 'write_file', args: { file_path: path, content: 'written by a session without the lease\n' } }));
  }, 120_000);

  it('uninstall takes out exactly what install added: our hooks go, every other setting stays', async (ctx) => {
    if (!agent) return ctx.skip();
    // Qwen Code may have rewritten its settings meanwhile (a settings migration): compared with what it left.
    const before = JSON.parse(readFileSync(settings, 'utf8')) as Record<string, unknown>;
    expect(JSON.stringify(before['hooks'])).toContain('hook qwen-guard');
    const removed = await scene.handoff(['uninstall', 'qwen']);
    expect(removed.code, removed.stderr).toBe(0);
    const rest = Object.fromEntries(Object.entries(before).filter(([key]) => key !== 'hooks'));
    expect(JSON.parse(readFileSync(settings, 'utf8'))).toEqual(rest);
    expect(Object.keys(rest)).toEqual(expect.arrayContaining(['general', 'privacy', 'telemetry']));
  }, 60_000);
});
