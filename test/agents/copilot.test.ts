import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/daemon.js';
import { agentCache, agentOrSkip, VERSIONS, type InstalledAgent } from './support/agent-install.js';
import { doctorOf, expectGuardAtHandoffReady, expectPrepareNotice, type ChatAgentRig } from './support/chat-agent-checks.js';
import { answersToolCall, startChatCompletionsMock, toolResults, type ChatTurn } from './support/mock-chat-completions.js';
import type { MockProvider } from './support/mock-server.js';
import { startPty } from './support/pty.js';
import { readingsOf } from './support/readings.js';
import { run, startScene, type Scene } from './support/scene.js';

/**
 * GitHub Copilot CLI (versions.json) against an OpenAI-compatible chat-completions mock (its BYOK
 * provider, `COPILOT_PROVIDER_BASE_URL`, with `COPILOT_OFFLINE` so nothing else is called), through
 * `copilot -p … --allow-all-tools --output-format json`.
 *
 * What the real agent does, found here:
 * - Hooks from `~/.copilot/hooks/*.json` run in prompt mode. Under PascalCase event names the payload
 *   is Claude's (session_id, cwd, hook_event_name, tool_name, tool_input); its `create` and `edit`
 *   tools arrive as `Write` and `Edit` with a `path`.
 * - `additionalContext` at the top level of a SessionStart / UserPromptSubmit answer reaches the model
 *   (the first as a user message, the second as a `<system_reminder>` in the prompt).
 * - A PreToolUse `permissionDecision: "deny"` refuses the one call; the model reads
 *   "Denied by preToolUse hook: <reason>" as the tool's result and the run goes on. A hook whose
 *   command cannot start is a denial too ("hook errored").
 * - A 429 is retried five times (about 5 s), then the turn ends with `session.error` (`statusCode`
 *   429, `errorType` "rate_limit") in `~/.copilot/session-state/<id>/events.jsonl`, exit 1, and a
 *   SessionEnd hook with `reason: "error"`.
 * - The native binary unpacks about 235 MB of JavaScript on first run: into the agent cache here
 *   (`COPILOT_PKG_CACHE_HOME`), not into each scene's HOME.
 * - `statusLine.command` of `~/.copilot/settings.json` runs only in the interactive UI (not with `-p`),
 *   every `refreshInterval` seconds, from the first render on. Its stdin is Claude-shaped; the context
 *   share Copilot shows is `context_window.current_context_used_percentage` (0 over 0 counted tokens
 *   before the first model call); its `used_percentage` is the session's cumulative tokens over the window.
 * - Interactive Copilot asks whether to trust the folder before it sends the prompt (not with `COPILOT_ALLOW_ALL=true`).
 */

let agent: InstalledAgent | undefined;
let mock: MockProvider;
let scene: Scene;
let next: ChatTurn = { text: 'done' };
let tool: ChatTurn | null = null;
/** What the user had in Copilot's settings.json before the install: a status line of their own, which saves what Copilot sent it. */
let userSettings = '';
/** Every payload the user's status line was sent, in order, each followed by a line holding only RS (U+001E). */
const seen = () => join(scene.home, 'statusline-seen.log');
const RECORD_END = '\n\u001e\n';

beforeAll(async () => {
  agent = await agentOrSkip('copilot');
  if (!agent) return;
  mock = await startChatCompletionsMock({ next: (request) => (tool !== null && !answersToolCall(request) ? tool : next) });
  scene = await startScene({
    COPILOT_OFFLINE: 'true',
    COPILOT_AUTO_UPDATE: 'false',
    COPILOT_PROVIDER_BASE_URL: `${mock.url}/v1`,
    COPILOT_MODEL: 'mock-model',
    COPILOT_PKG_CACHE_HOME: join(agentCache(), 'copilot-pkg'),
  });
  mkdirSync(join(scene.home, '.copilot'));
  userSettings = `${JSON.stringify({ statusLine: { type: 'command', command: `{ cat; printf '\\n\\036\\n'; } >> "${seen()}"; echo mine` } }, null, 2)}\n`;
  writeFileSync(join(scene.home, '.copilot', 'settings.json'), userSettings);
  const installed = await scene.handoff(['install', 'copilot']);
  expect(installed.code, installed.stderr).toBe(0);
}, 300_000);

afterAll(async () => {
  await scene?.stop();
  await mock?.close();
});

const copilot = (prompt: string) =>
  run(agent?.bin ?? '', ['-p', prompt, '--allow-all-tools', '--output-format', 'json'], { cwd: scene.repo, env: scene.env, timeoutMs: 90_000 });
const rig: ChatAgentRig = {
  get scene() {
    return scene;
  },
  get mock() {
    return mock;
  },
  run: (prompt) => copilot(prompt),
  setTool: (turn) => {
    tool = turn;
  },
};

/**
 * Stops the terminal and the Copilot in it: `script` dies at once, Copilot (another session, the pty's)
 * gets a hangup and shuts down on its own; it is waited for, then killed by its pid (its log's name holds it).
 */
async function stopCopilot(tui: ReturnType<typeof startPty>): Promise<void> {
  await tui.stop();
  const logs = join(scene.home, '.copilot', 'logs');
  const pids = (existsSync(logs) ? readdirSync(logs) : []).flatMap((name) => /^process-\d+-(\d+)\.log$/.exec(name)?.[1] ?? []).map(Number);
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  await until('Copilot to exit', async () => (pids.some(alive) ? undefined : true), 10_000).catch(() => {
    for (const pid of pids.filter(alive)) process.kill(pid, 'SIGKILL');
  });
}

describe.sequential(`Copilot CLI ${VERSIONS.copilot.version}, end to end`, () => {
  it('doctor: the hooks are live', async (ctx) => {
    if (!agent) return ctx.skip();
    expect(await doctorOf(scene, 'copilot')).toMatchObject({ live: true });
  }, 60_000);

  it("its interactive UI runs the status line: the daemon gets the context percentage Copilot computed, the user's own command still runs", async (ctx) => {
    if (!agent) return ctx.skip();
    // COPILOT_ALLOW_ALL: no folder-trust dialog before the prompt (what `--allow-all` answers too).
    const tui = startPty(agent.bin, ['-i', 'say hi'], { cwd: scene.repo, env: { ...scene.env, COPILOT_ALLOW_ALL: 'true' } });
    try {
      // Before its first model call Copilot sends 0 % over 0 counted tokens: no reading until the turn is counted.
      const { context } = await readingsOf(scene, 'copilot-statusline', ['context'], 40_000);
      // Copilot redraws its status line again and again, its placeholder 0 among them: the reading is one
      // it computed over counted tokens, and no payload of 0 counted tokens made one.
      const counted = () =>
        (existsSync(seen()) ? readFileSync(seen(), 'utf8') : '')
          .split(RECORD_END)
          // The last piece is a record the user's command is still writing (or nothing).
          .slice(0, -1)
          .map(
            (text) => JSON.parse(text) as { session_id: string; context_window: { current_context_tokens: number; current_context_used_percentage: number } },
          )
          .filter((payload) => payload.context_window.current_context_tokens > 0)
          .map((payload) => ({ used_percent: payload.context_window.current_context_used_percentage, executor: payload.session_id }));
      const made = { used_percent: context?.used_percent, executor: context?.executor };
      // The user's command runs beside the daemon call (daemon/cli/hooks/chain.ts): its copy of the payload
      // the reading came from may land after the reading. Waited for; what it holds is judged below.
      await until(
        'the user’s command to record that payload',
        async () => (counted().some((p) => p.used_percent === made.used_percent && p.executor === made.executor) ? true : undefined),
        20_000,
      ).catch(() => undefined);
      expect(counted().length).toBeGreaterThan(0);
      expect(counted()).toContainEqual(made);
      expect(context).toMatchObject({ resets_at: null });
      expect(mock.requests.length).toBeGreaterThan(0);
      // The user's line first, then ours: the state, and the context just sent (Copilot redraws only what changed, so in two pieces).
      const shown = (screen: string) => screen.includes('mine | handoff NORMAL') && screen.includes(`· ctx ${context?.used_percent}%`);
      await until('the status line', async () => (shown(tui.screen()) ? true : undefined), 20_000);
    } finally {
      await stopCopilot(tui);
    }
  }, 60_000);

  // Copilot CLI reports no quota on disk, so PREPARE is entered by hand here, as an operator would.
  it('the PREPARE notice reaches the model through the UserPromptSubmit hook', async (ctx) => {
    if (!agent) return ctx.skip();
    await expectPrepareNotice(rig);
  }, 120_000);

  it('a 429 ends the turn; the SessionEnd hook hands its session.error to the daemon: a provider warning, EVACUATE', async (ctx) => {
    if (!agent) return ctx.skip();
    next = { rateLimited: true };
    const result = await copilot('say hi');
    next = { text: 'done' };
    expect(result.code).not.toBe(0);
    await scene.untilState('EVACUATE');
    expect((await scene.status())['warnings']).toEqual([expect.objectContaining({ source: 'copilot-events', kind: 'rate_limit', recovers: true })]);
  }, 120_000);

  it('at HANDOFF_READY the guard denies one write, the reason reaches the model, the file is not written; the pickup reaches the model', async (ctx) => {
    if (!agent) return ctx.skip();
    // --allow-all-tools: Copilot's own approval would not stop the edit; the guard must be what stops it.
    const refused = await expectGuardAtHandoffReady(rig, (path) => ({ tool: 'create', args: { path, file_text: 'written by a session without the lease\n' } }));
    expect(refused).toMatch(/^Denied by preToolUse hook: session-handoff: /);
  }, 120_000);

  it('a launcher that cannot start: doctor says every edit is blocked, and Copilot does deny the edit; uninstall takes out exactly what install added', async (ctx) => {
    if (!agent) return ctx.skip();
    const hooks = join(scene.home, '.copilot', 'hooks', 'session-handoff.json');
    const good = readFileSync(hooks, 'utf8');
    expect((await scene.handoff(['install', 'copilot', '--command', '/nonexistent/handoff'])).code).toBe(0);
    const doctor = await scene.handoff(['doctor', '--json']);
    expect(doctor.code).toBe(10);
    expect(doctor.stdout).toContain('until it starts, the agent denies every file edit');
    // Fails closed, even with the repository back in a state where anyone may edit.
    expect((await scene.handoff(['cancel'])).code).toBe(0);
    const file = join(scene.repo, 'free.md');
    tool = { tool: 'create', args: { path: file, file_text: 'x\n' } };
    const before = mock.requests.length;
    await copilot('write it');
    tool = null;
    expect(existsSync(file)).toBe(false);
    expect(toolResults(mock.requests.slice(before))[0]).toMatch(/^Denied by preToolUse hook .*\(hook errored\)/);
    const removed = await scene.handoff(['uninstall', 'copilot']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(existsSync(hooks)).toBe(false);
    // The user's settings.json is theirs again, byte for byte: their status line command restored.
    expect(readFileSync(join(scene.home, '.copilot', 'settings.json'), 'utf8')).toBe(userSettings);
    // What stays is the backup the second install kept of the first one's file.
    expect(readdirSync(join(scene.home, '.copilot', 'hooks'))).toEqual([expect.stringMatching(/^session-handoff\.json\.handoff-backup-/)]);
    expect(good).toContain('hook copilot-guard');
  }, 180_000);
});
