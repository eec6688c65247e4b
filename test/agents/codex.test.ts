import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentOrSkip, VERSIONS, type InstalledAgent } from './support/agent-install.js';
import type { MockProvider } from './support/mock-server.js';
import { startResponsesMock } from './support/mock-openai-responses.js';
import { readingsOf, resetIn } from './support/readings.js';
import { run, startScene, type Scene } from './support/scene.js';
import { writeCodexMockConfig } from './support/codex-config.js';

/**
 * Codex CLI (versions.json) against a Responses API mock, through `codex exec`.
 *
 * What the real agent does, found here:
 * - A custom provider (`[model_providers.mock]`, `wire_api = "responses"`) is enough: Codex reads the
 *   `x-codex-{primary,secondary}-{used-percent,window-minutes,reset-at}` headers of any provider's
 *   response and writes them into the rollout's `token_count` event (`rate_limits.limit_id: "codex"`,
 *   `used_percent` as a float, `resets_at` in epoch seconds) right after the response completes.
 * - `codex exec` writes its rollout under `$CODEX_HOME/sessions/YYYY/MM/DD/` (CODEX_HOME defaulting to
 *   ~/.codex) with `session_meta.cwd` the working directory: the daemon's tail finds it by itself.
 * - `info.model_context_window` is Codex's own figure for the model (258,400 for an unknown model):
 *   the daemon does not turn token counts into a context percentage.
 * - The AGENTS.md block of `$CODEX_HOME/AGENTS.md` reaches the model in every request.
 */

let agent: InstalledAgent | undefined;
let mock: MockProvider;
let scene: Scene;
const primary = { usedPercent: 82, windowMinutes: 300, resetAt: resetIn(181) };
const secondary = { usedPercent: 40, windowMinutes: 10080, resetAt: resetIn(6 * 24 * 60 + 11) };

beforeAll(async () => {
  agent = await agentOrSkip('codex');
  if (!agent) return;
  mock = await startResponsesMock({ primary, secondary, inputTokens: 5000 });
  scene = await startScene({ MOCK_API_KEY: 'sk-mock-not-a-key' });
  writeCodexMockConfig(scene.home, mock.url);
  const installed = await scene.handoff(['install', 'codex']);
  expect(installed.code, installed.stderr).toBe(0);
  expect(installed.stdout + installed.stderr).toMatch(/\/hooks/);
  // Installed but not live: Codex runs no hook a person has not trusted, and doctor says so (exit 10).
  const before = await scene.handoff(['doctor', '--json']);
  expect(before.code).toBe(10);
  expect(codexOf(before.stdout)).toMatchObject({ installed: true, live: false, step: expect.stringMatching(/\/hooks/) });
  // The person's one step, taken by the installer on their word (`--trust`): it names each hook it
  // trusts and records Codex's hash in config.toml. The notices below prove Codex accepts that hash.
  const trusted = await scene.handoff(['install', 'codex', '--trust']);
  expect(trusted.code, trusted.stderr).toBe(0);
  const hooksPath = join(scene.home, '.codex', 'hooks.json');
  expect(trusted.stdout).toContain(`trusted for Codex (--trust): ${hooksPath}:session_start:`);
  expect(trusted.stdout).not.toContain('type `/hooks`');
  const toml = readFileSync(join(scene.home, '.codex', 'config.toml'), 'utf8');
  expect(toml.match(/^trusted_hash = "sha256:[0-9a-f]{64}"$/gm)).toHaveLength(3);
  // Once more changes nothing: exactly the hooks it wrote, each trusted once.
  expect((await scene.handoff(['install', 'codex', '--trust'])).stdout).not.toContain('trusted for Codex');
  expect(readFileSync(join(scene.home, '.codex', 'config.toml'), 'utf8')).toBe(toml);
  const after = await scene.handoff(['doctor', '--json']);
  expect(codexOf(after.stdout)).toMatchObject({ installed: true, live: true });
}, 300_000);

const codexOf = (stdout: string) => (JSON.parse(stdout) as { data: { agents: { agent: string }[] } }).data.agents.find((a) => a.agent === 'codex');

afterAll(async () => {
  await scene?.stop();
  await mock?.close();
});

/**
 * Codex runs a hook from hooks.json only once the user has trusted it (a `trusted_hash` it keeps in
 * config.toml, recorded from its TUI); `codex exec` skips an untrusted hook without a word. The hooks
 * are trusted above as a person would, so exec runs with no bypass: the notices below prove Codex agreed.
 */
const exec = (prompt: string) => run(agent?.bin ?? '', ['exec', prompt], { cwd: scene.repo, env: scene.env });
const sentSince = (before: number) =>
  mock.requests
    .slice(before)
    .map((r) => JSON.stringify(r.body))
    .join('\n');

describe.sequential(`Codex CLI ${VERSIONS.codex.version}, end to end`, () => {
  it('the rollout the daemon tails carries the headers Codex read: five_hour 82 %, weekly 40 %, exact resets; the repository is in PREPARE', async (ctx) => {
    if (!agent) return ctx.skip();
    const before = mock.requests.length;
    const result = await exec('say hi');
    expect(result.code, result.stderr).toBe(0);
    const readings = await readingsOf(scene, 'codex-rollout', ['five_hour', 'weekly']);
    expect(readings['five_hour']).toMatchObject({ used_percent: 82, resets_at: primary.resetAt });
    expect(readings['weekly']).toMatchObject({ used_percent: 40, resets_at: secondary.resetAt });
    expect(readings['context']).toBeUndefined();
    await scene.untilState('PREPARE');
    // The instructions block reaches the model with every request.
    expect(sentSince(before)).toContain('session-handoff:begin');
  }, 120_000);

  it('the PREPARE notice reaches the model through the UserPromptSubmit hook', async (ctx) => {
    if (!agent) return ctx.skip();
    const before = mock.requests.length;
    const result = await exec('carry on');
    expect(result.code, result.stderr).toBe(0);
    expect(sentSince(before)).toContain('is in PREPARE');
  }, 120_000);

  it('at HANDOFF_READY the next session gets the pickup through the SessionStart hook', async (ctx) => {
    if (!agent) return ctx.skip();
    expect((await scene.handoff(['now', '--no-wait', '--reason', 'agents suite'])).code).toBe(0);
    await scene.untilState('HANDOFF_READY');
    const cycle = String(((await scene.status())['cycle'] as { id: string }).id);
    const before = mock.requests.length;
    const result = await exec('pick it up');
    expect(result.code, result.stderr).toBe(0);
    // The cycle's own id: the AGENTS.md block names the command too, with a placeholder.
    expect(sentSince(before)).toContain(`handoff accept ${cycle} --as`);
  }, 120_000);
});
