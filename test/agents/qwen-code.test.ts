import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/daemon.js';
import { agentOrSkip, VERSIONS, type InstalledAgent } from './support/agent-install.js';
import { doctorOf, expectGuardAtHandoffReady, expectPrepareNotice, type ChatAgentRig } from './support/chat-agent-checks.js';
import { answersToolCall, startChatCompletionsMock, type ChatTurn } from './support/mock-chat-completions.js';
import type { MockProvider } from './support/mock-server.js';
import { startPty } from './support/pty.js';
import { readingsOf } from './support/readings.js';
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
 * - `ui.statusLine` (command mode) runs only in the interactive UI. Its stdin's
 *   `context_window.used_percentage` is Qwen's own figure: the last prompt's tokens over the model's
 *   window, rounded to 0.1. It is 0 before the first request, and always 0 for a model whose window Qwen
 *   does not know (`context_window_size` 0, as for this mock's model): the user's settings name the
 *   window here (`model.generationConfig.contextWindowSize`), as a user of such a model would.
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
/** The user's own `ui` settings, a status line command of theirs among them (it saves what Qwen sent it). */
let userUi: Record<string, unknown> = {};
const seen = () => join(scene.home, 'statusline-seen.json');

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
  userUi = {
    enableFollowupSuggestions: false,
    statusLine: { type: 'command', command: `cat > "$HOME/.seen" && mv "$HOME/.seen" "${seen()}"; echo mine` },
  };
  // The user's own settings: local file telemetry (the source of the api_error records), no usage
  // statistics, no updates; no background memory agents or suggestions (each is more model calls per run).
  const userSettings = `${JSON.stringify(
    {
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      privacy: { usageStatisticsEnabled: false },
      memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false, enableAutoSkill: false },
      ui: userUi,
      model: { generationConfig: { contextWindowSize: 128_000 } },
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

/**
 * Waits for every process working in `dir` (the agent the pty ran, which gets a hangup and shuts down
 * on its own) to exit, and kills by pid any still there after 10 s.
 */
async function untilGone(dir: string): Promise<void> {
  const inDir = () =>
    readdirSync('/proc')
      .filter((pid) => /^\d+$/.test(pid))
      .filter((pid) => {
        try {
          return readlinkSync(`/proc/${pid}/cwd`) === dir;
        } catch {
          return false;
        }
      })
      .map(Number);
  await until('the agent to exit', async () => (inDir().length === 0 ? true : undefined), 10_000).catch(() => {
    for (const pid of inDir()) process.kill(pid, 'SIGKILL');
  });
}

describe.sequential(`Qwen Code ${VERSIONS['qwen-code'].version}, end to end`, () => {
  it('doctor: the hooks are live', async (ctx) => {
    if (!agent) return ctx.skip();
    expect(await doctorOf(scene, 'qwen')).toMatchObject({ live: true });
  }, 60_000);

  it("its interactive UI runs the status line: the daemon gets the context percentage Qwen computed, the user's own command still runs", async (ctx) => {
    if (!agent) return ctx.skip();
    const args = ['-i', 'say hi', '--auth-type', 'openai', '--openai-base-url', `${mock.url}/v1`, '--model', 'mock-model', '--yolo'];
    const tui = startPty(agent.bin, args, { cwd: scene.repo, env: scene.env });
    try {
      // Before its first request Qwen sends 0 over 0 prompt tokens: no reading until the turn is counted.
      const { context } = await readingsOf(scene, 'qwen-statusline', ['context'], 40_000);
      type Sent = { session_id: string; context_window: { context_window_size: number; current_usage: number; used_percentage: number } };
      // The user's command runs beside the daemon call (daemon/cli/hooks/chain.ts) and keeps the last payload:
      // the counted one the reading came from may land after the reading.
      const sent = await until(
        'the user’s command to keep a counted payload',
        async () => {
          const last = existsSync(seen()) ? (JSON.parse(readFileSync(seen(), 'utf8')) as Sent) : null;
          return last !== null && last.context_window.current_usage > 0 ? last : undefined;
        },
        20_000,
      );
      expect(sent.context_window).toMatchObject({ context_window_size: 128_000, current_usage: 1000 });
      expect(context).toMatchObject({ used_percent: sent.context_window.used_percentage, resets_at: null, executor: sent.session_id });
      // The user's line first, then ours: the state, and the context just sent.
      const shown = (screen: string) => screen.includes('mine | handoff NORMAL') && screen.includes(`· ctx ${context?.used_percent}%`);
      await until('the status line', async () => (shown(tui.screen()) ? true : undefined), 20_000);
    } finally {
      await tui.stop();
      await untilGone(scene.repo);
    }
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
    // The user's status line command is theirs again.
    const rest = { ...Object.fromEntries(Object.entries(before).filter(([key]) => key !== 'hooks')), ui: userUi };
    expect(JSON.parse(readFileSync(settings, 'utf8'))).toEqual(rest);
    expect(Object.keys(rest)).toEqual(expect.arrayContaining(['general', 'privacy', 'telemetry']));
  }, 60_000);
});
