import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentOrSkip, VERSIONS, type InstalledAgent } from './support/agent-install.js';
import { startChatCompletionsMock } from './support/mock-chat-completions.js';
import type { MockProvider } from './support/mock-server.js';
import { run, startScene, type Scene } from './support/scene.js';

/**
 * OpenCode (versions.json) against an OpenAI-compatible mock, through `opencode run`.
 *
 * OpenCode gets only the AGENTS.md block (docs/agents/opencode.md): no hooks, no numbers. What this
 * proves is that the block `handoff install opencode` writes reaches the model, in every session.
 */

let agent: InstalledAgent | undefined;
let mock: MockProvider;
let scene: Scene;

beforeAll(async () => {
  agent = await agentOrSkip('opencode');
  if (!agent) return;
  mock = await startChatCompletionsMock();
  scene = await startScene({
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_CLAUDE_CODE: '1',
  });
  const config = join(scene.env['XDG_CONFIG_HOME'] ?? '', 'opencode');
  mkdirSync(config, { recursive: true });
  writeFileSync(
    join(config, 'opencode.json'),
    JSON.stringify({
      $schema: 'https://opencode.ai/config.json',
      autoupdate: false,
      share: 'disabled',
      model: 'mock/mock-model',
      provider: {
        mock: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Mock',
          options: { baseURL: `${mock.url}/v1`, apiKey: 'mock-not-a-key' },
          models: { 'mock-model': { name: 'Mock model' } },
        },
      },
    }),
  );
  const installed = await scene.handoff(['install', 'opencode']);
  expect(installed.code, installed.stderr).toBe(0);
}, 300_000);

afterAll(async () => {
  await scene?.stop();
  await mock?.close();
});

describe.sequential(`OpenCode ${VERSIONS.opencode.version}, end to end`, () => {
  it('the AGENTS.md block reaches the model in the session `opencode run` starts', async (ctx) => {
    if (!agent) return ctx.skip();
    const result = await run(agent.bin, ['run', 'say hi'], { cwd: scene.repo, env: scene.env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('done');
    // OpenCode sends two requests per session: a title generator's and the agent's own; the block goes in the agent's.
    const systems = mock.requests.map((r) => String((r.body as { messages?: { role: string; content: unknown }[] }).messages?.[0]?.content ?? ''));
    const agentPrompt = systems.find((text) => text.startsWith('You are opencode'));
    expect(agentPrompt).toContain('<!-- session-handoff:begin');
    expect(agentPrompt).toContain('handoff status');
    expect(systems.find((text) => text.startsWith('You are a title generator'))).not.toContain('session-handoff');
  }, 180_000);
});
