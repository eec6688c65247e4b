import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { agentOrSkip, VERSIONS } from './support/agent-install.js';
import { startAnthropicMock } from './support/mock-anthropic.js';
import type { MockProvider } from './support/mock-server.js';
import { functionOutputs, startResponsesMock } from './support/mock-openai-responses.js';
import { startPty } from './support/pty.js';
import { readingsOf, resetIn } from './support/readings.js';
import { run, startScene, type Run, type Scene } from './support/scene.js';

/**
 * Issue 34's relay between two real agents, each against its provider's mock (the only stand-in: a
 * provider cannot run here; every handoff process, daemon, git remote and agent is real). Two
 * scenes stand for two machines: each a HOME of its own with its own daemon and state dir.
 *
 * Claude Code works in the primary's repository; its provider's five-hour window reaches 93 %, which
 * Claude Code reports through its status line (the one channel with its quota numbers); the daemon
 * evacuates. On the other machine, in a fresh clone of the same remote, Codex CLI is given the command
 * the primary printed; the mock model runs exactly that command through Codex's shell tool
 * (`exec_command`), then writes a file and runs the return command. The primary takes the work back
 * with the command its status prints, and the file is in its tree.
 */

const MODEL = 'claude-sonnet-4-5';
/** Decoded, never verified, by Claude Code: with this audience it reads the unified windows into its status line. */
const gatewayToken = [{ alg: 'none', typ: 'JWT' }, { aud: 'claude-gateway', sub: 'agents-suite' }, 'unsigned']
  .map((part) => Buffer.from(typeof part === 'string' ? part : JSON.stringify(part)).toString('base64url'))
  .join('.');
/** Who commits on each machine: the fresh clone has no git identity of its own. */
const IDENTITY = {
  GIT_AUTHOR_NAME: 'relay',
  GIT_AUTHOR_EMAIL: 'relay@example.invalid',
  GIT_COMMITTER_NAME: 'relay',
  GIT_COMMITTER_EMAIL: 'relay@example.invalid',
};

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/** One line typed into a shell of that machine's user, in `cwd`. */
const typed = (scene: Scene, cwd: string, line: string): Promise<Run> => run('sh', ['-c', line], { cwd, env: scene.env, timeoutMs: 120_000 });

/** The first `handoff accept …` between backticks on the `next` line of `handoff status` (folded across lines). */
function printedAccept(status: string): string | undefined {
  const lines = status.split('\n');
  const start = lines.findIndex((l) => l.startsWith('next'));
  if (start < 0) return undefined;
  const folded = [lines[start] ?? ''];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith(' ')) break;
    folded.push(line.trim());
  }
  return [...folded.join(' ').matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '').find((c) => c.startsWith('handoff accept'));
}

async function primaryMachine(mock: MockProvider): Promise<Scene> {
  const scene = await startScene({
    ANTHROPIC_BASE_URL: mock.url,
    ANTHROPIC_AUTH_TOKEN: gatewayToken,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_DISABLE_TERMINAL_TITLE: '1',
    ...IDENTITY,
  });
  cleanup.push(() => scene.stop());
  writeFileSync(
    join(scene.home, '.claude.json'),
    JSON.stringify({ hasCompletedOnboarding: true, projects: { [scene.repo]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } } }),
  );
  mkdirSync(join(scene.home, '.claude'));
  const installed = await scene.handoff(['install', 'claude']);
  expect(installed.code, installed.stderr).toBe(0);
  return scene;
}

/** The other machine: its own HOME and daemon, Codex configured for the mock, its hooks installed and trusted by this user. */
async function receiverMachine(mock: MockProvider): Promise<Scene> {
  const scene = await startScene({ MOCK_API_KEY: 'sk-mock-not-a-key', ...IDENTITY });
  cleanup.push(() => scene.stop());
  mkdirSync(join(scene.home, '.codex'));
  writeFileSync(
    join(scene.home, '.codex', 'config.toml'),
    [
      'model = "gpt-5-codex"',
      'model_provider = "mock"',
      'check_for_update_on_startup = false',
      '[model_providers.mock]',
      'name = "mock"',
      `base_url = "${mock.url}/v1"`,
      'wire_api = "responses"',
      'env_key = "MOCK_API_KEY"',
      '[analytics]',
      'enabled = false',
      '[feedback]',
      'enabled = false',
      '',
    ].join('\n'),
  );
  const installed = await scene.handoff(['install', 'codex', '--trust']);
  expect(installed.code, installed.stderr).toBe(0);
  return scene;
}

describe.sequential(`a relay: Claude Code ${VERSIONS['claude-code'].version} → Codex CLI ${VERSIONS.codex.version} → back`, () => {
  it('Claude Code at 93 % of its five-hour window evacuates; Codex in a fresh clone on another machine runs the printed accept, writes, returns; the primary takes the work back', async (ctx) => {
    const claude = await agentOrSkip('claude-code');
    const codex = await agentOrSkip('codex');
    if (!claude || !codex) return ctx.skip();

    // The primary: Claude Code at work, its provider's five-hour window at 93 %.
    const anthropic = await startAnthropicMock({
      fiveHour: { utilization: 0.93, reset: resetIn(143) },
      sevenDay: { utilization: 0.2, reset: resetIn(4 * 24 * 60) },
      inputTokens: 1000,
    });
    cleanup.push(() => anthropic.close());
    const primary = await primaryMachine(anthropic);
    // Work in progress in the primary's tree, not committed: what the evacuation must carry.
    writeFileSync(join(primary.repo, 'work.md'), 'the primary’s work in progress\n');
    const tui = startPty(claude.bin, ['--model', MODEL, 'carry on with the task'], { cwd: primary.repo, env: primary.env });
    try {
      const readings = await readingsOf(primary, 'claude-statusline', ['five_hour'], 120_000);
      expect(readings['five_hour']).toMatchObject({ used_percent: 93 });
      await until('EVACUATE', async () => ((await primary.status())['state'] === 'EVACUATE' ? true : undefined), 60_000);
    } finally {
      await tui.stop();
    }
    // The agent's atomic step is done (what its EVACUATE notice asks it to say): the daemon offers the lease.
    expect((await primary.handoff(['drained'])).code).toBe(0);
    await primary.untilState('HANDOFF_READY');
    const cycle = String(((await primary.status())['cycle'] as { id: string }).id);
    const offered = await primary.handoff(['status']);
    // The lease travels on the remote: the printed command names it, for a clone on any machine.
    const accept = printedAccept(offered.stdout) ?? '';
    expect(accept, offered.stdout).toBe(`handoff accept ${cycle} --from origin`);

    // The other machine: a fresh clone of the same remote, and Codex given the command the primary printed.
    const remote = git(primary.repo, 'remote', 'get-url', 'origin');
    const responses = await startResponsesMock({
      primary: { usedPercent: 12, windowMinutes: 300, resetAt: resetIn(200) },
      secondary: { usedPercent: 5, windowMinutes: 10080, resetAt: resetIn(6 * 24 * 60) },
      inputTokens: 5000,
      // The model's plan, one shell command per turn: the printed accept, the work, the return. Not a login
      // shell (Codex's default): a distribution's /etc/profile would set PATH anew, without the user's `handoff`.
      next: (request) => {
        const ran = functionOutputs([request]).length;
        return ran < script.length ? { call: 'exec_command', args: { cmd: script[ran], login: false } } : { text: 'done' };
      },
    });
    cleanup.push(() => responses.close());
    const receiver = await receiverMachine(responses);
    const clone = join(tempDir('machine-b'), 'b');
    git(tempDir('x'), 'clone', '-q', remote, clone);
    const script = [accept, `printf 'written by Codex, holding the lease\\n' > relay.md`, 'handoff return --no-wait'];
    const before = responses.requests.length;
    const result = await run(codex.bin, ['exec', '--dangerously-bypass-approvals-and-sandbox', `take over this handoff: run \`${accept}\`, then continue`], {
      cwd: clone,
      env: receiver.env,
      timeoutMs: 300_000,
    });
    expect(result.code, result.stderr).toBe(0);
    const outputs = functionOutputs(responses.requests.slice(before).slice(-1));
    expect(outputs, JSON.stringify(outputs)).toHaveLength(3);
    // Codex ran the accept as printed: it holds the lease, on the cycle's branch, with the primary's work.
    expect(outputs[0]).toMatch(/hold the lease/);
    expect(readFileSync(join(clone, 'work.md'), 'utf8')).toBe('the primary’s work in progress\n');
    expect(readFileSync(join(clone, 'relay.md'), 'utf8')).toBe('written by Codex, holding the lease\n');

    // Back home: the command the primary's status prints takes the work back.
    const back = await until(
      'the return leg offered to the primary',
      async () => {
        const status = await primary.handoff(['status']);
        return /RETURN_HANDOFF_READY/.test(status.stdout) ? printedAccept(status.stdout) : undefined;
      },
      60_000,
    );
    expect(back).toBe(`handoff accept ${cycle} --return`);
    const home = await typed(primary, primary.repo, back);
    expect(home.code, home.stdout + home.stderr).toBe(0);
    expect(readFileSync(join(primary.repo, 'relay.md'), 'utf8')).toBe('written by Codex, holding the lease\n');
    expect(readFileSync(join(primary.repo, 'work.md'), 'utf8')).toBe('the primary’s work in progress\n');
    expect((await primary.status())['state']).toBe('CLOSED');
  }, 900_000);
});
