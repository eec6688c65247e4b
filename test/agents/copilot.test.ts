import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentCache, agentOrSkip, VERSIONS, type InstalledAgent } from './support/agent-install.js';
import { doctorOf, expectGuardAtHandoffReady, expectPrepareNotice, type ChatAgentRig } from './support/chat-agent-checks.js';
import { answersToolCall, startChatCompletionsMock, toolResults, type ChatTurn } from './support/mock-chat-completions.js';
import type { MockProvider } from './support/mock-server.js';
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
 */

let agent: InstalledAgent | undefined;
let mock: MockProvider;
let scene: Scene;
let next: ChatTurn = { text: 'done' };
let tool: ChatTurn | null = null;

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

describe.sequential(`Copilot CLI ${VERSIONS.copilot.version}, end to end`, () => {
  it('doctor: the hooks are live', async (ctx) => {
    if (!agent) return ctx.skip();
    expect(await doctorOf(scene, 'copilot')).toMatchObject({ live: true });
  }, 60_000);

  // Copilot CLI reports no percentage on disk, so PREPARE is entered by hand here, as an operator would.
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
    // What stays is the backup the second install kept of the first one's file.
    expect(readdirSync(join(scene.home, '.copilot', 'hooks'))).toEqual([expect.stringMatching(/^session-handoff\.json\.handoff-backup-/)]);
    expect(good).toContain('hook copilot-guard');
  }, 180_000);
});
