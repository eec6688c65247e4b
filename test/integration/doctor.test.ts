import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexHookTrust } from '../../adapters/agents/index.js';
import { startDaemon } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';
import { piped, statuslinePayload } from './ingest-support.js';

interface AgentCheck {
  agent: string;
  installed: boolean;
  live: boolean;
  step: string | null;
  hooks: { command: string; problem: string | null; trust?: string }[];
  missing: string[];
  problem?: string;
  telemetry: { last_seen: string | null };
}
type Report = { code: string; data: { agents: AgentCheck[]; daemon: boolean } };

/** A person's machine: a fresh home, no `handoff` on PATH, the default state dir of that home. */
function machine(stateDir = tempDir('state')) {
  const home = tempDir('home');
  const env = {
    HOME: home,
    HANDOFF_STATE_DIR: stateDir,
    XDG_STATE_HOME: '',
    CLAUDE_CONFIG_DIR: '',
    CODEX_HOME: '',
    GEMINI_CLI_HOME: '',
    XDG_CONFIG_HOME: '',
    PATH: '/usr/bin:/bin',
    HANDOFF_NO_AUTO_START: '1',
  };
  const run = async (...args: string[]) => {
    const result = await piped([...args], '', { env });
    return { code: result.code, stdout: result.stdout, stderr: result.stderr };
  };
  const doctor = async () => {
    const result = await run('doctor', '--json');
    const report = JSON.parse(result.stdout) as Report;
    return { code: result.code, report, agent: (name: string) => report.data.agents.find((a) => a.agent === name) };
  };
  return { home, env, run, doctor };
}

describe('handoff doctor', () => {
  it('nothing installed: exit 0, every agent "not installed" with the install command as its step', async () => {
    const { doctor } = machine();
    const { code, report } = await doctor();
    expect([code, report.code, report.data.daemon]).toEqual([0, 'agents_live', false]);
    expect(report.data.agents.map((a) => [a.agent, a.installed, a.step])).toEqual([
      ['claude', false, '`handoff install claude`'],
      ['codex', false, '`handoff install codex`'],
      ['gemini', false, '`handoff install gemini`'],
      ['opencode', false, '`handoff install opencode`'],
      ['copilot', false, '`handoff install copilot`'],
      ['qwen', false, '`handoff install qwen`'],
      ['cline', false, '`handoff install cline`'],
    ]);
  });

  it('Codex hooks nobody trusted: exit 10 (agents_not_live) with the review step; once a person trusted them, live', async () => {
    const { home, run, doctor } = machine();
    expect((await run('install', 'claude')).code).toBe(0);
    const installed = await run('install', 'codex');
    expect(installed.stdout).toContain('note: Codex runs these hooks only once you have trusted them: start `codex` in a terminal, type `/hooks`');
    const before = await doctor();
    expect([before.code, before.report.code]).toEqual([10, 'agents_not_live']);
    expect(before.agent('claude')).toMatchObject({ installed: true, live: true, step: null });
    expect(before.agent('codex')).toMatchObject({ installed: true, live: false, step: expect.stringContaining('type `/hooks`') as unknown });
    expect(before.agent('codex')?.hooks.map((hook) => hook.trust)).toEqual(['needs_review', 'needs_review', 'needs_review']);
    const human = await run('doctor');
    expect(human.code).toBe(10);
    expect(human.stdout).toContain('codex: installed, NOT live');
    expect(human.stdout).toContain('to do once: start `codex` in a terminal, type `/hooks`');
    expect(human.stderr).toContain('error: installed but not live: codex');

    // What Codex writes when the person trusts them in /hooks (the test stands in for the person).
    const hooksPath = join(home, '.codex', 'hooks.json');
    const trust = codexHookTrust(JSON.parse(readFileSync(hooksPath, 'utf8')), hooksPath, new Map(), ['claude-session-start', 'claude-context']);
    writeFileSync(
      join(home, '.codex', 'config.toml'),
      trust.map((hook) => `[hooks.state.${JSON.stringify(hook.key)}]\ntrusted_hash = "${hook.current_hash}"\n`).join('\n'),
    );
    const after = await doctor();
    expect([after.code, after.report.code, after.agent('codex')?.live]).toEqual([0, 'agents_live', true]);
  });

  it('Cline: live once the plugin is installed; a run its own log says went without the plugin is named, with the load timeout as the step', async () => {
    const { home, env, doctor } = machine();
    const installed = await piped(['install', 'cline'], '', { env, cwd: tempRepo() });
    expect(installed.code, installed.stderr).toBe(0);
    expect((await doctor()).agent('cline')).toMatchObject({ installed: true, live: true, step: null });
    // Cline's own log records (pino lines, as Cline 3.0.65 writes them) of a run whose plugin sandbox did not start in time.
    const logs = join(home, '.cline', 'data', 'logs');
    mkdirSync(logs, { recursive: true });
    const record = (inMs: number, msg: string) =>
      `${JSON.stringify({ level: 30, time: new Date(Date.now() + inMs).toISOString(), pid: 4242, hostname: 'vm', name: 'cline.cli', component: 'main', msg })}\n`;
    writeFileSync(
      join(logs, 'cline.log'),
      record(1000, 'plugin loading failed; continuing without plugins (plugin-sandbox call timed out after 4000ms: initialize)'),
    );
    const failed = await doctor();
    expect(failed.code).toBe(10);
    expect(failed.agent('cline')).toMatchObject({
      installed: true,
      live: false,
      problem: expect.stringContaining('timed out after 4000ms') as unknown,
      step: expect.stringContaining('CLINE_PLUGIN_IMPORT_TIMEOUT_MS=30000') as unknown,
    });
    // A later run started after it: the logs no longer say anything against the plugin.
    appendFileSync(join(logs, 'cline.log'), record(2000, 'CLI run started'));
    expect((await doctor()).agent('cline')).toMatchObject({ live: true, step: null });
  });

  it('a hook whose install moved away (a deleted clone) is named, with reinstalling as the step', async () => {
    const { home, doctor } = machine();
    mkdirSync(join(home, '.claude'));
    const gone = join(tempDir('gone'), 'dist', 'daemon', 'cli', 'main.js');
    const command = `'${process.execPath}' '${gone}' hook claude-guard`;
    writeFileSync(
      join(home, '.claude', 'settings.json'),
      JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Edit', hooks: [{ type: 'command', command }] }] } }),
    );
    const { code, agent } = await doctor();
    expect(code).toBe(10);
    expect(agent('claude')).toMatchObject({
      installed: true,
      live: false,
      hooks: [{ command, problem: `${gone} does not exist` }],
      step: '`handoff install claude` again, so the hooks start this install',
    });
  });

  it('an install by an older version, without the SessionEnd hook, is named with installing again as the step', async () => {
    const { home, run, doctor } = machine();
    expect((await run('install', 'claude')).code).toBe(0);
    const path = join(home, '.claude', 'settings.json');
    const settings = JSON.parse(readFileSync(path, 'utf8')) as { hooks: Record<string, unknown> };
    delete settings.hooks['SessionEnd'];
    writeFileSync(path, JSON.stringify(settings, null, 2));
    const before = await doctor();
    expect(before.code).toBe(10);
    expect(before.agent('claude')).toMatchObject({
      installed: true,
      live: false,
      missing: ['SessionEnd (claude-event)'],
      step: '`handoff install claude` again, to add the hooks an older install did not write',
    });
    expect((await run('doctor')).stdout).toContain('✗ no SessionEnd (claude-event) hook: installed by an older version');
    expect((await run('install', 'claude')).code).toBe(0);
    const after = await doctor();
    expect([after.code, after.agent('claude')?.live, after.agent('claude')?.missing]).toEqual([0, true, []]);
  });

  it("the StopFailure and SessionEnd hooks spooling into another state dir than the daemon's are named", async () => {
    const { env, run } = machine();
    expect((await run('install', 'claude')).code).toBe(0);
    const elsewhere = tempDir('other-state');
    const result = await piped(['doctor', '--json'], '', { env: { ...env, HANDOFF_STATE_DIR: elsewhere } });
    const claude = (JSON.parse(result.stdout) as Report).data.agents.find((a) => a.agent === 'claude');
    expect(result.code).toBe(10);
    const problem = `it spools into ${join(env.HANDOFF_STATE_DIR, 'spool')}, but the daemon's state dir is ${elsewhere}`;
    expect(claude?.hooks.map((hook) => hook.problem).filter(Boolean)).toEqual([problem, problem]);
  });

  it("when the daemon runs: when each agent's telemetry was last seen", async () => {
    const daemon = await startDaemon();
    try {
      const { run, doctor } = machine(daemon.stateDir);
      expect((await run('install', 'claude')).code).toBe(0);
      const payload = statuslinePayload(tempRepo(), 42);
      expect((await piped(['--state-dir', daemon.stateDir, 'ingest', 'claude-statusline', '--json'], payload)).code).toBe(0);
      const { code, report, agent } = await doctor();
      expect([code, report.data.daemon]).toEqual([0, true]);
      expect(Date.parse(agent('claude')?.telemetry.last_seen ?? '')).toBeGreaterThan(Date.now() - 120_000);
      expect(agent('codex')?.telemetry.last_seen).toBeNull();
    } finally {
      await daemon.stop();
    }
  });
});
