import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/daemon.js';
import { agentOrSkip, VERSIONS, type InstalledAgent } from './support/agent-install.js';
import { doctorOf, expectGuardAtHandoffReady, expectPrepareNotice, type ChatAgentRig } from './support/chat-agent-checks.js';
import { answersToolCall, startChatCompletionsMock, toolResults, type ChatTurn } from './support/mock-chat-completions.js';
import type { MockProvider } from './support/mock-server.js';
import { run, startScene, type Scene } from './support/scene.js';

/**
 * Cline CLI (versions.json) against an OpenAI-compatible chat-completions mock (the only stand-in:
 * a provider cannot run here), through `cline auth -p openai-compatible -b …` once, then
 * `cline --json "…"` per run.
 *
 * What the real agent does, found here:
 * - `handoff install cline` writes `.clinerules/session-handoff.md` and the plugin
 *   `$CLINE_DIR/plugins/session-handoff.js`. Cline loads plugins in a sandbox process and gives the
 *   load 4 s (`CLINE_PLUGIN_IMPORT_TIMEOUT_MS` overrides it); past that it logs "plugin loading
 *   failed; continuing without plugins" and runs unguarded. On this shared, loaded machine the
 *   sandbox's start alone took longer, so the test sets the variable, as docs/agents/cline.md tells a user.
 * - The plugin's beforeRun `appendContext` reaches the model as `<hook_context source="RunStart">`;
 *   its beforeTool `{skip, reason}` refuses that one call and the model reads the reason as the result.
 * - The first run starts a background hub (`cline --cline-hub-daemon`) that serves later runs and
 *   outlives them; its pid is in `<data>/locks/hub/production.json`. The test gives it a port of its
 *   own and stops it at the end.
 */

let agent: InstalledAgent | undefined;
let mock: MockProvider;
let scene: Scene;
let clineDir: string;
const next: ChatTurn = { text: 'done' };
let tool: ChatTurn | null = null;

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

const hubPid = (): number | null => {
  const record = join(clineDir, 'data', 'locks', 'hub', 'production.json');
  if (!existsSync(record)) return null;
  const pid = (JSON.parse(readFileSync(record, 'utf8')) as { pid?: unknown }).pid;
  return typeof pid === 'number' ? pid : null;
};

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The hub this suite's runs started (its own record names it): asked to stop, then killed if it will not. */
async function stopHub(): Promise<number | null> {
  const pid = hubPid();
  if (pid === null || !alive(pid)) return pid;
  process.kill(pid, 'SIGTERM');
  try {
    await until('the Cline hub to exit', async () => (alive(pid) ? undefined : true), 15_000);
  } catch {
    process.kill(pid, 'SIGKILL');
  }
  return pid;
}

beforeAll(async () => {
  agent = await agentOrSkip('cline');
  if (!agent) return;
  mock = await startChatCompletionsMock({ next: (request) => (tool !== null && !answersToolCall(request) ? tool : next) });
  scene = await startScene({
    CLINE_NO_AUTO_UPDATE: '1',
    CLINE_HUB_PORT: String(await freePort()),
    CLINE_PLUGIN_IMPORT_TIMEOUT_MS: '60000',
  });
  clineDir = join(scene.home, '.cline');
  scene.env['CLINE_DIR'] = clineDir;
  // The user's own settings: no telemetry, no updates.
  mkdirSync(join(clineDir, 'data', 'settings'), { recursive: true });
  writeFileSync(join(clineDir, 'data', 'settings', 'global-settings.json'), `${JSON.stringify({ telemetryOptOut: true, autoUpdateEnabled: false })}\n`);
  const auth = await run(agent.bin, ['auth', '-p', 'openai-compatible', '-k', 'mock-not-a-key', '-m', 'mock-model', '-b', `${mock.url}/v1`], {
    cwd: scene.repo,
    env: scene.env,
    timeoutMs: 120_000,
  });
  expect(auth.code, auth.stderr).toBe(0);
  const installed = await scene.handoff(['install', 'cline']);
  expect(installed.code, installed.stderr).toBe(0);
}, 300_000);

afterAll(async () => {
  if (clineDir !== undefined) await stopHub();
  await scene?.stop();
  await mock?.close();
}, 60_000);

const cline = (prompt: string) => run(agent?.bin ?? '', ['--json', prompt], { cwd: scene.repo, env: scene.env, timeoutMs: 120_000 });
const rig: ChatAgentRig = {
  get scene() {
    return scene;
  },
  get mock() {
    return mock;
  },
  run: (prompt) => cline(prompt),
  setTool: (turn) => {
    tool = turn;
  },
};

describe.sequential(`Cline CLI ${VERSIONS.cline.version}, end to end`, () => {
  it('install writes the rules file and the plugin; doctor: the plugin is live', async (ctx) => {
    if (!agent) return ctx.skip();
    expect(readFileSync(join(scene.repo, '.clinerules', 'session-handoff.md'), 'utf8')).toContain('session-handoff');
    expect(readFileSync(join(clineDir, 'plugins', 'session-handoff.js'), 'utf8')).toContain('hook cline-guard');
    expect(await doctorOf(scene, 'cline')).toMatchObject({ installed: true, live: true, step: null });
  }, 60_000);

  // Cline reports no quota or context percentage: PREPARE by hand, as an operator would.
  it('the PREPARE notice reaches the model through the plugin (beforeRun)', async (ctx) => {
    if (!agent) return ctx.skip();
    await expectPrepareNotice(rig);
    // The plugin loaded in the runs so far: Cline logged no failure to load it.
    expect(await doctorOf(scene, 'cline')).toMatchObject({ live: true });
  }, 180_000);

  it('at HANDOFF_READY the guard refuses one editor call, the model reads the reason; the pickup reaches the model', async (ctx) => {
    if (!agent) return ctx.skip();
    // No session holds the repository between runs: the evacuation needs no drain and goes on to HANDOFF_READY.
    expect((await scene.handoff(['now', '--no-wait', '--reason', 'agents suite'])).code).toBe(0);
    await expectGuardAtHandoffReady(rig, (path) => ({ tool: 'editor', args: { path, new_text: 'written by a session without the lease\n' } }));
  }, 180_000);

  it('a launcher that cannot start: doctor says every edit is blocked, and the plugin refuses the edit, saying why', async (ctx) => {
    if (!agent) return ctx.skip();
    expect((await scene.handoff(['install', 'cline', '--command', '/nonexistent/handoff'])).code).toBe(0);
    const doctor = await scene.handoff(['doctor', '--json']);
    expect(doctor.code).toBe(10);
    expect(doctor.stdout).toContain('until it starts, the agent denies every file edit');
    // Refused even with the repository back in a state where anyone may edit.
    expect((await scene.handoff(['cancel'])).code).toBe(0);
    const file = join(scene.repo, 'free.md');
    tool = { tool: 'editor', args: { path: file, new_text: 'x\n' } };
    const before = mock.requests.length;
    const result = await cline('write it');
    tool = null;
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect(toolResults(mock.requests.slice(before)).join('\n')).toContain('session-handoff: the lease guard could not run');
  }, 180_000);

  it('uninstall takes out exactly what install added; the hub the runs started is stopped', async (ctx) => {
    if (!agent) return ctx.skip();
    const removed = await scene.handoff(['uninstall', 'cline']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(existsSync(join(scene.repo, '.clinerules'))).toBe(false);
    // What stays among the plugins is the backup the second install kept of the first one's file, under a name Cline does not load.
    expect(readdirSync(join(clineDir, 'plugins'))).toEqual([expect.stringMatching(/^session-handoff\.js\.handoff-backup-/)]);
    expect(JSON.parse(readFileSync(join(clineDir, 'data', 'settings', 'global-settings.json'), 'utf8'))).toMatchObject({
      telemetryOptOut: true,
      autoUpdateEnabled: false,
    });
    const pid = await stopHub();
    expect(pid).not.toBeNull();
    expect(alive(pid ?? 0)).toBe(false);
  }, 60_000);
});
