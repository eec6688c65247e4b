import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { agentOrSkip, VERSIONS, type InstalledAgent } from './support/agent-install.js';
import { startAnthropicMock } from './support/mock-anthropic.js';
import type { MockProvider } from './support/mock-server.js';
import { startChatCompletionsMock, toolResults } from './support/mock-chat-completions.js';
import { functionOutputs, startResponsesMock } from './support/mock-openai-responses.js';
import { startPty } from './support/pty.js';
import { readingsOf, resetIn } from './support/readings.js';
import { run, startScene, type Run, type Scene } from './support/scene.js';
import { writeCodexMockConfig } from './support/codex-config.js';

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
 * with the command its status prints, and the file is in its tree. The same with Qwen Code as the receiver.
 *
 * The receiver is handed no command: its SessionStart hook asks its own daemon, which has never seen
 * this clone, and the daemon finds the remote's offer (the clone came with the `handoff/<cycle>`
 * branch; the remote's lease records say it is offered). The pickup names the accept command, and the
 * mock model runs exactly the command it read there.
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

/** What the work (written by the model on the receiver) says, in the file it writes. */
const RELAYED = 'written by the receiver, holding the lease\n';

/** The accept command a pickup names (`--as` the session), as the model reads it in what the agent sent. */
const pickedUp = (body: unknown): string | undefined => /handoff accept \S+ --from \S+ --as [^\s"\\`]+/.exec(JSON.stringify(body))?.[0];

/**
 * The model's plan, one shell command per turn: the accept its pickup names, the work, the return.
 * `picked` keeps the command it ran, for the test to check.
 */
function planFrom(body: unknown, ran: number, picked: string[]): string | null {
  if (ran === 0) {
    const accept = pickedUp(body);
    if (accept === undefined) return null;
    picked.push(accept);
    return accept;
  }
  return [`printf '${RELAYED.replace('\n', '\\n')}' > relay.md`, 'handoff return --no-wait'][ran - 1] ?? null;
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
  writeCodexMockConfig(scene.home, mock.url);
  const installed = await scene.handoff(['install', 'codex', '--trust']);
  expect(installed.code, installed.stderr).toBe(0);
  return scene;
}

interface Offered {
  readonly primary: Scene;
  readonly cycle: string;
  /** The accept command the primary printed. */
  readonly accept: string;
  /** A fresh clone of the primary's remote on the other machine. */
  readonly clone: string;
}

/** Claude Code at work in the primary's repository until its five-hour window, at 93 %, evacuates it; the lease on offer. */
async function evacuatedPrimary(claude: InstalledAgent): Promise<Offered> {
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
  const clone = join(tempDir('machine-b'), 'b');
  git(tempDir('x'), 'clone', '-q', git(primary.repo, 'remote', 'get-url', 'origin'), clone);
  return { primary, cycle, accept, clone };
}

/** What the receiver's shell tool answered to the three commands: it held the lease, wrote, returned. */
function expectRelayed(offered: Offered, picked: readonly string[], outputs: readonly string[]): void {
  // The pickup named the command the primary printed, for this session.
  expect(picked).toEqual([expect.stringMatching(new RegExp(`^${offered.accept} --as \\S+$`))]);
  expect(outputs, JSON.stringify(outputs)).toHaveLength(3);
  // The accept, as printed: the receiver holds the lease, on the cycle's branch, with the primary's work.
  expect(outputs[0]).toMatch(/hold the lease/);
  expect(git(offered.clone, 'branch', '--show-current')).toBe(`handoff/${offered.cycle}`);
  expect(readFileSync(join(offered.clone, 'work.md'), 'utf8')).toBe('the primary’s work in progress\n');
  expect(readFileSync(join(offered.clone, 'relay.md'), 'utf8')).toBe(RELAYED);
}

/** Back home: the command the primary's status prints takes the work back, and the receiver's file is in its tree. */
async function takenBack({ primary, cycle }: Offered): Promise<void> {
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
  expect(readFileSync(join(primary.repo, 'relay.md'), 'utf8')).toBe(RELAYED);
  expect(readFileSync(join(primary.repo, 'work.md'), 'utf8')).toBe('the primary’s work in progress\n');
  expect((await primary.status())['state']).toBe('CLOSED');
}

describe.sequential(`a relay from Claude Code ${VERSIONS['claude-code'].version} and back`, () => {
  it(`to Codex CLI ${VERSIONS.codex.version} in a fresh clone on another machine: its pickup names the accept, the model runs it through Codex's shell tool, writes, returns; the primary takes the work back`, async (ctx) => {
    const claude = await agentOrSkip('claude-code');
    const codex = await agentOrSkip('codex');
    if (!claude || !codex) return ctx.skip();
    const offered = await evacuatedPrimary(claude);
    const picked: string[] = [];
    const responses = await startResponsesMock({
      primary: { usedPercent: 12, windowMinutes: 300, resetAt: resetIn(200) },
      secondary: { usedPercent: 5, windowMinutes: 10080, resetAt: resetIn(6 * 24 * 60) },
      inputTokens: 5000,
      // One shell command per turn. Not a login shell (Codex's default): a distribution's /etc/profile
      // would set PATH anew, without the user's `handoff`.
      next: (request) => {
        const cmd = planFrom(request.body, functionOutputs([request]).length, picked);
        return cmd === null ? { text: 'done' } : { call: 'exec_command', args: { cmd, login: false } };
      },
    });
    cleanup.push(() => responses.close());
    const receiver = await receiverMachine(responses);
    const result = await run(
      codex.bin,
      ['exec', '--dangerously-bypass-approvals-and-sandbox', `take over this handoff: run \`${offered.accept}\`, then continue`],
      {
        cwd: offered.clone,
        env: receiver.env,
        timeoutMs: 300_000,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    expectRelayed(offered, picked, functionOutputs(responses.requests.slice(-1)));
    await takenBack(offered);
  }, 900_000);

  it(`to Qwen Code ${VERSIONS['qwen-code'].version} in a fresh clone on another machine: the same through run_shell_command`, async (ctx) => {
    const claude = await agentOrSkip('claude-code');
    const qwen = await agentOrSkip('qwen-code');
    if (!claude || !qwen) return ctx.skip();
    const offered = await evacuatedPrimary(claude);
    const picked: string[] = [];
    const chat = await startChatCompletionsMock({
      next: (request) => {
        const command = planFrom(request.body, toolResults([request]).length, picked);
        return command === null ? { text: 'done' } : { tool: 'run_shell_command', args: { command, is_background: false } };
      },
    });
    cleanup.push(() => chat.close());
    const receiver = await startScene({ OPENAI_API_KEY: 'mock-not-a-key', QWEN_CODE_SUPPRESS_YOLO_WARNING: '1', ...IDENTITY });
    cleanup.push(() => receiver.stop());
    mkdirSync(join(receiver.home, '.qwen'));
    // The user's own settings: no usage statistics, no updates, no background model calls.
    writeFileSync(
      join(receiver.home, '.qwen', 'settings.json'),
      `${JSON.stringify({
        general: { disableAutoUpdate: true, disableUpdateNag: true },
        privacy: { usageStatisticsEnabled: false },
        memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false, enableAutoSkill: false },
        ui: { enableFollowupSuggestions: false },
      })}\n`,
    );
    const installed = await receiver.handoff(['install', 'qwen']);
    expect(installed.code, installed.stderr).toBe(0);
    const result = await run(
      qwen.bin,
      [
        'continue the work in this repository',
        '--auth-type',
        'openai',
        '--openai-base-url',
        `${chat.url}/v1`,
        '--model',
        'mock-model',
        '--yolo',
        '-o',
        'stream-json',
        '--max-wall-time',
        '240s',
      ],
      { cwd: offered.clone, env: receiver.env, timeoutMs: 300_000 },
    );
    expect(result.code, result.stderr).toBe(0);
    expectRelayed(offered, picked, toolResults(chat.requests.slice(-1)));
    await takenBack(offered);
  }, 900_000);
});
