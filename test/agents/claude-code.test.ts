import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/daemon.js';
import { git } from '../support/git.js';
import { agentOrSkip, VERSIONS, type InstalledAgent } from './support/agent-install.js';
import { answersToolResult, startAnthropicMock, toolResults } from './support/mock-anthropic.js';
import type { MockProvider } from './support/mock-server.js';
import { startPty } from './support/pty.js';
import { readingsOf, resetIn } from './support/readings.js';
import { run, startScene, type Scene } from './support/scene.js';

/**
 * Claude Code (versions.json) against a Messages API mock, the way a user runs it.
 *
 * What the real agent does, found here:
 * - `rate_limits` reaches the status line payload only for subscribers or behind a gateway. Claude
 *   Code decides "gateway" by decoding (not verifying) ANTHROPIC_AUTH_TOKEN: a JWT whose `aud` is
 *   `claude-gateway`, with ANTHROPIC_BASE_URL not api.anthropic.com. It then reads the
 *   `anthropic-ratelimit-unified-{5h,7d}-{utilization,reset}` headers of every response.
 * - It drops a window whose reset lies in the past or more than a year ahead, so the resets are
 *   taken from the real clock here (the agent's clock is not ours to inject).
 * - `context_window.used_percentage` is the last response's input tokens over the model's window
 *   (200,000 for claude-sonnet-4-5; 1,000,000 for the default model of this version).
 * - `claude -p` runs no status line at all; its hooks (SessionStart, UserPromptSubmit, PreToolUse,
 *   PostToolUse) run as in the TUI. So the numbers come from the TUI under a pseudo-terminal, the
 *   rest from headless runs.
 */

const MODEL = 'claude-sonnet-4-5';
const WINDOW = 200_000;
const fiveHour = { utilization: 0.82, reset: resetIn(143) };
const sevenDay = { utilization: 0.41, reset: resetIn(4 * 24 * 60 + 17) };

/** Decoded, never verified, by Claude Code: only the audience matters. */
const gatewayToken = [{ alg: 'none', typ: 'JWT' }, { aud: 'claude-gateway', sub: 'agents-suite' }, 'unsigned']
  .map((part) => Buffer.from(typeof part === 'string' ? part : JSON.stringify(part)).toString('base64url'))
  .join('.');

let agent: InstalledAgent | undefined;
let mock: MockProvider;
let scene: Scene;
/** What the mock answers next to a prompt (a tool call to make, or text). */
let nextTool: { tool: string; input: Record<string, unknown> } | null = null;

beforeAll(async () => {
  agent = await agentOrSkip('claude-code');
  if (!agent) return;
  mock = await startAnthropicMock({
    fiveHour,
    sevenDay,
    inputTokens: 0.59 * WINDOW,
    turn: (request) => (nextTool && !answersToolResult(request) ? nextTool : { text: 'done' }),
  });
  scene = await startScene({
    ANTHROPIC_BASE_URL: mock.url,
    ANTHROPIC_AUTH_TOKEN: gatewayToken,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_DISABLE_TERMINAL_TITLE: '1',
  });
  // Past the first-run screens, as a user who has used Claude Code in this repository before.
  writeFileSync(
    join(scene.home, '.claude.json'),
    JSON.stringify({ hasCompletedOnboarding: true, projects: { [scene.repo]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } } }),
  );
  mkdirSync(join(scene.home, '.claude'));
  const installed = await scene.handoff(['install', 'claude']);
  expect(installed.code, installed.stderr).toBe(0);
}, 300_000);

afterAll(async () => {
  await scene?.stop();
  await mock?.close();
});

const headless = (prompt: string, extra: readonly string[] = []) =>
  run(agent?.bin ?? '', ['-p', prompt, '--model', MODEL, '--output-format', 'json', ...extra], { cwd: scene.repo, env: scene.env });

describe.sequential(`Claude Code ${VERSIONS['claude-code'].version}, end to end`, () => {
  it('the status line carries the numbers Claude Code computed from the headers and usage; 82 % moves the repository to PREPARE', async (ctx) => {
    if (!agent) return ctx.skip();
    const tui = startPty(agent.bin, ['--model', MODEL, 'say hi'], { cwd: scene.repo, env: scene.env });
    try {
      const readings = await readingsOf(scene, 'claude-statusline', ['context', 'five_hour', 'seven_day']);
      expect(readings['context']).toMatchObject({ used_percent: 59, resets_at: null });
      expect(readings['five_hour']).toMatchObject({ used_percent: 82, resets_at: fiveHour.reset });
      expect(readings['seven_day']).toMatchObject({ used_percent: 41, resets_at: sevenDay.reset });
      await scene.untilState('PREPARE');
      // The status line shows what the hook printed: the fullest window and the context of this payload.
      await until('the status line', async () => (/5h 82% · ctx 59%/.test(tui.screen()) ? true : undefined), 30_000);
    } finally {
      await tui.stop();
    }
  }, 120_000);

  it('the PREPARE notice reaches the model through the UserPromptSubmit hook', async (ctx) => {
    if (!agent) return ctx.skip();
    const before = mock.requests.length;
    const result = await headless('carry on');
    expect(result.code, result.stderr).toBe(0);
    const sent = mock.requests
      .slice(before)
      .map((r) => JSON.stringify(r.body))
      .join('\n');
    expect(sent).toContain('is in PREPARE');
    expect(sent).toContain('handoff capsule set');
  }, 120_000);

  it('at HANDOFF_READY the PreToolUse guard denies the edit the model asks for; the file stays as it was; the pickup reaches the model', async (ctx) => {
    if (!agent) return ctx.skip();
    expect((await scene.handoff(['now', '--no-wait', '--reason', 'agents suite'])).code).toBe(0);
    await scene.untilState('HANDOFF_READY');

    // A new file: Claude Code refuses a Write over an existing file it has not read, before any hook runs.
    const file = join(scene.repo, 'notes.md');
    const tree = git(scene.repo, 'status', '--porcelain', '--untracked-files=all');
    nextTool = { tool: 'Write', input: { file_path: file, content: 'overwritten by a session without the lease\n' } };
    const before = mock.requests.length;
    // acceptEdits: Claude Code's own permission prompt would stop the edit too; the guard must be what stops it.
    const result = await headless('edit the readme', ['--permission-mode', 'acceptEdits']);
    nextTool = null;
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect(git(scene.repo, 'status', '--porcelain', '--untracked-files=all')).toBe(tree);
    const sent = mock.requests
      .slice(before)
      .map((r) => JSON.stringify(r.body))
      .join('\n');
    // The deny reason comes back to the model as the tool's result.
    const results = [...new Set(toolResults(mock.requests.slice(before)))];
    expect(results).toHaveLength(1);
    expect(results[0]).toMatch(/^PreToolUse:Write hook error: session-handoff: \S+ is in HANDOFF_READY: .*No session may change files now/);
    // SessionStart of this new session: the pickup, with the command to take the lease.
    expect(sent).toMatch(/handoff accept [^ ]+ --as/);
  }, 120_000);
});
