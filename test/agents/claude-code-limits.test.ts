import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../support/daemon.js';
import { agentOrSkip, VERSIONS, type InstalledAgent } from './support/agent-install.js';
import { startAnthropicMock } from './support/mock-anthropic.js';
import type { MockProvider } from './support/mock-server.js';
import { startPty } from './support/pty.js';
import { readingsOf, resetIn } from './support/readings.js';
import { run, startScene, type Scene } from './support/scene.js';

/**
 * Claude Code (versions.json) at its limits, each case in a repository of its own that starts NORMAL,
 * so the stage it reaches is what this limit did.
 *
 * What the real agent does, found here and in its binary (docs/agents/claude-code.md, "At a limit"):
 * - `claude -p` on a subscriber's rejected unified limit (429, `anthropic-ratelimit-unified-status:
 *   rejected`) makes one request, prints `api_error_status: 429`, `api_error: "usage_limit_reached"`
 *   and exits 1 within a second: no retry, with or without `x-should-retry: false`. A bare 429 (no
 *   unified headers, no `x-should-retry: false`) is retried up to 10 times over minutes.
 * - It starts the StopFailure hook without waiting and kills it as it exits (in 1 of 8 runs it never
 *   started); it waits for SessionEnd. Its transcript then holds the stop as an assistant record.
 * - Signed in to a gateway (`CLAUDE_CODE_USE_GATEWAY=1` beside the JWT: the JWT alone gives the
 *   windows, not this) it reads a spend cap from the `-overage-*` headers the gateway protocol in its
 *   binary describes, and puts it in the status line as `rate_limits.spend_limit`.
 */

const MODEL = 'claude-sonnet-4-5';

/** Decoded, never verified, by Claude Code: only the audience matters. */
const gatewayToken = [{ alg: 'none', typ: 'JWT' }, { aud: 'claude-gateway', sub: 'agents-suite' }, 'unsigned']
  .map((part) => Buffer.from(typeof part === 'string' ? part : JSON.stringify(part)).toString('base64url'))
  .join('.');

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/** A user of Claude Code behind the mock, past the first-run screens, with `handoff install claude` done. */
async function claudeScene(mock: MockProvider, beforeInstall?: (home: string) => void, env: NodeJS.ProcessEnv = {}): Promise<Scene> {
  const scene = await startScene({
    ...env,
    ANTHROPIC_BASE_URL: mock.url,
    ANTHROPIC_AUTH_TOKEN: gatewayToken,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_DISABLE_TERMINAL_TITLE: '1',
  });
  cleanup.push(() => scene.stop());
  writeFileSync(
    join(scene.home, '.claude.json'),
    JSON.stringify({ hasCompletedOnboarding: true, projects: { [scene.repo]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } } }),
  );
  mkdirSync(join(scene.home, '.claude'));
  beforeInstall?.(scene.home);
  const installed = await scene.handoff(['install', 'claude']);
  expect(installed.code, installed.stderr).toBe(0);
  return scene;
}

const messageCalls = (mock: MockProvider) => mock.requests.filter((r) => r.path.startsWith('/v1/messages') && !r.path.startsWith('/v1/messages/count_tokens'));

describe.sequential(`Claude Code ${VERSIONS['claude-code'].version} at its limits`, () => {
  let agent: InstalledAgent | undefined;

  it('claude -p on a reached five-hour limit: one request, exit 1, and the stop reaches the daemon from the transcript: EVACUATE', async (ctx) => {
    agent = await agentOrSkip('claude-code');
    if (!agent) return ctx.skip();
    const fiveHour = { utilization: 1.02, reset: resetIn(143) };
    const mock = await startAnthropicMock({
      fiveHour,
      sevenDay: { utilization: 0.41, reset: resetIn(4 * 24 * 60) },
      inputTokens: 1000,
      refusal: () => 'limit_reached',
    });
    cleanup.push(() => mock.close());
    const scene = await claudeScene(mock);

    const result = await run(agent.bin, ['-p', 'carry on', '--model', MODEL, '--output-format', 'json'], { cwd: scene.repo, env: scene.env });
    expect(result.code, result.stderr).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ is_error: true, api_error_status: 429, api_error: 'usage_limit_reached' });
    expect(messageCalls(mock)).toHaveLength(1);

    await scene.untilState('EVACUATE');
    // The transcript's record (via SessionEnd) always arrives; StopFailure's, when Claude Code let it run, says less.
    const warnings = await until(
      'the stop read from the transcript',
      async () => {
        const all = ((await scene.status())['warnings'] ?? []) as { source: string; kind: string; recovers: boolean | null; text: string }[];
        return all.some((w) => w.text.includes('usage_limit_reached')) ? all : undefined;
      },
      30_000,
    );
    expect(warnings.every((w) => w.source === 'claude-hook' && w.kind === 'rate_limit' && w.recovers === true)).toBe(true);
    expect(warnings.map((w) => w.text)).toContain(
      `Claude Code stopped on a rate limit (HTTP 429): usage_limit_reached, five_hour window, resets at ${new Date(fiveHour.reset * 1000).toISOString()}`,
    );
  }, 180_000);

  it('claude -p on a bare 429 with CLAUDE_CODE_MAX_RETRIES=0 (what a headless user behind such a proxy sets): one request, and the stop reaches the daemon', async (ctx) => {
    agent ??= await agentOrSkip('claude-code');
    if (!agent) return ctx.skip();
    const mock = await startAnthropicMock({
      fiveHour: { utilization: 0.1, reset: resetIn(143) },
      sevenDay: { utilization: 0.1, reset: resetIn(4 * 24 * 60) },
      inputTokens: 1000,
      refusal: () => 'throttled',
    });
    cleanup.push(() => mock.close());
    const scene = await claudeScene(mock, undefined, { CLAUDE_CODE_MAX_RETRIES: '0' });
    const result = await run(agent.bin, ['-p', 'carry on', '--model', MODEL, '--output-format', 'json'], { cwd: scene.repo, env: scene.env });
    expect(result.code, result.stderr).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ is_error: true, api_error_status: 429 });
    expect(messageCalls(mock)).toHaveLength(1);
    await scene.untilState('EVACUATE');
    // From the transcript (only its record names the status): no window, no reset to tell.
    await until(
      'the stop read from the transcript',
      async () => {
        const all = ((await scene.status())['warnings'] ?? []) as { text: string }[];
        return all.some((w) => w.text === 'Claude Code stopped on a rate limit (HTTP 429)') ? true : undefined;
      },
      30_000,
    );
  }, 180_000);

  it('a gateway spend cap at 85 % moves the repository to PREPARE, at 93 % to EVACUATE, through the real status line', async (ctx) => {
    agent ??= await agentOrSkip('claude-code');
    if (!agent) return ctx.skip();
    const reset = resetIn(9 * 24 * 60);
    let spend = { utilization: 0.85, reset };
    const mock = await startAnthropicMock({
      fiveHour: { utilization: 0.12, reset: resetIn(143) },
      sevenDay: { utilization: 0.08, reset: resetIn(4 * 24 * 60) },
      inputTokens: 1000,
      spend: () => spend,
    });
    cleanup.push(() => mock.close());
    // The user's own status line, which the installer chains: it keeps what Claude Code sent, for this test to read.
    const scene = await claudeScene(
      mock,
      (home) =>
        writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ statusLine: { type: 'command', command: 'cat > "$HOME/statusline.json"' } })),
      // Signed in to a gateway: the JWT alone gives the windows, spend_limit needs this too.
      { CLAUDE_CODE_USE_GATEWAY: '1' },
    );
    const session = async (percent: number, state: string) => {
      const tui = startPty(agent?.bin ?? '', ['--model', MODEL, 'say hi'], { cwd: scene.repo, env: scene.env });
      try {
        // Each session has its own reading slot: the first session's 85 % stays beside the second's.
        await until(
          `a spend reading of ${percent} %`,
          async () => {
            const readings = ((await scene.status())['readings'] ?? []) as { source: string; metric: string; used_percent: number }[];
            return readings.some((r) => r.source === 'claude-statusline' && r.metric === 'spend' && r.used_percent === percent) ? true : undefined;
          },
          60_000,
        );
        await scene.untilState(state);
      } finally {
        await tui.stop();
      }
    };

    await session(85, 'PREPARE');
    const sent = JSON.parse(readFileSync(join(scene.home, 'statusline.json'), 'utf8')) as { rate_limits?: Record<string, unknown> };
    // What Claude Code computed from the headers: a percent and the reset, no amounts (the gateway's usage endpoint is not served).
    expect(sent.rate_limits?.['spend_limit']).toEqual({ used_percentage: 85, resets_at: reset });
    const readings = await readingsOf(scene, 'claude-statusline', ['spend', 'five_hour', 'seven_day']);
    expect([readings['spend']?.resets_at, readings['five_hour']?.used_percent, readings['seven_day']?.used_percent]).toEqual([reset, 12, 8]);

    spend = { utilization: 0.93, reset };
    await session(93, 'EVACUATE');
  }, 240_000);
});
