import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, cli, startDaemon, until, type DaemonProcess } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';
import { fixtureText, piped, statuslinePayload } from './ingest-support.js';

let daemon: DaemonProcess;
beforeAll(async () => {
  daemon = await startDaemon(undefined, { CODEX_HOME: tempDir('codex') });
});
afterAll(async () => {
  await daemon.stop();
});

/**
 * A hook run. A status line gives the daemon 450 ms (daemon/cli/hooks/statusline.ts), which a loaded
 * machine can miss on a repository's first payload (the workspace opens then): these tests judge the
 * daemon's answer, so a run that got none is run again, at most twice. The deadline itself is
 * judged by 'a daemon that accepts but never answers'.
 */
async function hook(name: string, input: string, ...args: string[]) {
  for (let tries = 1; ; tries += 1) {
    const run = await piped(['hook', name, '--state-dir', daemon.stateDir, ...args], input);
    if (!run.stdout.endsWith('handoff: daemon not answering\n') || tries === 3) return run;
  }
}
const state = async (repo: string) => String((await cli(daemon.stateDir, ['status', '--json'], repo)).json.data?.['state']);
/**
 * EVACUATE that stays: an agent session is at work (its status line reported), so the drain waits for
 * its `handoff drained` (up to the drain timeout).
 */
const evacuate = async (repo: string) => {
  await api(daemon, 'POST', '/v1/signals', { repo, source: 'claude-statusline', metric: 'context', used_percent: 30, executor: 'agent-at-work' });
  return api(daemon, 'POST', '/v1/now', { repo, reason: 'test' });
};
/** A state dir no daemon ever served. */
const nobody = () => join(tempDir('nobody'), 'state');

function toolCall(repo: string, session: string, tool: string, file = 'src/index.ts'): string {
  return JSON.stringify({
    session_id: session,
    cwd: repo,
    hook_event_name: 'PreToolUse',
    tool_name: tool,
    tool_input: { file_path: join(repo, file), content: 'x' },
  });
}

describe('handoff hook claude-statusline', () => {
  it('forwards a 93 % five_hour payload: the repository goes to EVACUATE and one line is printed', async () => {
    const repo = tempRepo();
    const run = await hook('claude-statusline', statuslinePayload(repo, 93));
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('handoff EVACUATE · 5h 93% · ctx 59%\n');
    expect(await state(repo)).toBe('EVACUATE');
  });

  it('a payload with null percentages moves nothing', async () => {
    const repo = tempRepo();
    const run = await hook('claude-statusline', statuslinePayload(repo, null, { context: null }));
    expect(run.stdout).toBe('handoff NORMAL · 7d 41.2%\n');
    expect(await state(repo)).toBe('NORMAL');
    const firstRender = fixtureText('claude-statusline/apikey-first-render.json').replaceAll('/home/dev/acme-api', repo);
    expect((await hook('claude-statusline', firstRender)).stdout).toBe('handoff NORMAL\n');
    expect((await cli(daemon.stateDir, ['status', '--json'], repo)).json.data).toMatchObject({ state: 'NORMAL', pressure: { percent: 41.2 } });
  });

  it('garbage on stdin, no repository, or no daemon: still one line and exit 0, quickly', async () => {
    const garbage = await hook('claude-statusline', '\u0000not json{');
    expect([garbage.code, garbage.stdout]).toEqual([0, 'handoff: unreadable status payload\n']);
    const outside = await hook('claude-statusline', statuslinePayload(tempDir('plain'), 50));
    expect([outside.code, outside.stdout]).toEqual([0, 'handoff: not in a git repository\n']);
    const down = await piped(['hook', 'claude-statusline', '--state-dir', nobody()], statuslinePayload(tempRepo(), 95));
    expect([down.code, down.stdout]).toEqual([0, 'handoff: daemon down\n']);
    expect(down.ms).toBeLessThan(2000);
  });

  it('a daemon that accepts but never answers is given up on within the deadline', async () => {
    const { createServer } = await import('node:net');
    // The hooks reach the daemon only over the socket in the private state dir.
    const stateDir = tempDir('silent');
    chmodSync(stateDir, 0o700);
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(join(stateDir, 'daemon.sock'), resolve));
    chmodSync(join(stateDir, 'daemon.sock'), 0o600);
    writeFileSync(join(stateDir, 'token'), 'a'.repeat(64), { mode: 0o600 });
    try {
      const run = await piped(['hook', 'claude-statusline', '--state-dir', stateDir], statuslinePayload(tempRepo(), 50));
      expect([run.code, run.stdout]).toEqual([0, 'handoff: daemon not answering\n']);
      expect(run.ms).toBeLessThan(1500);
    } finally {
      silent.close();
    }
  });

  it("chains the user's previous status line: same stdin, its line first", async () => {
    const repo = tempRepo();
    // Reads the same stdin as Claude Code would give it; shell tools rather than a second node, whose
    // start alone can pass the chain's 2 s deadline on a loaded CI machine.
    const previous = `tr -d ' \\n' | grep -o '"session_id":"[^"]*' | cut -c15-22 | sed 's/^/mine:/'`;
    const run = await hook('claude-statusline', statuslinePayload(repo, 20), '--chain', previous);
    expect(run.stdout).toBe('mine:3f0c9a52 | handoff NORMAL · 7d 41.2% · ctx 59%\n');
    const broken = await hook('claude-statusline', statuslinePayload(repo, 20), '--chain', 'exit 3');
    expect([broken.code, broken.stdout]).toEqual([0, 'handoff NORMAL · 7d 41.2% · ctx 59%\n']);
  });
});

describe('handoff hook copilot-statusline and qwen-statusline', () => {
  it("reads Copilot CLI's own context share, prints one line; its 0 before the first model call is no reading", async () => {
    const repo = tempRepo();
    const payload = (name: string) =>
      readFileSync(new URL(`../fixtures/telemetry/copilot/${name}`, import.meta.url), 'utf8').replaceAll('/home/dev/src/acme-api', repo);
    expect((await hook('copilot-statusline', payload('statusline-1.0.102-first-render.json'))).stdout).toBe('handoff NORMAL\n');
    const run = await hook('copilot-statusline', payload('statusline-1.0.102-after-turn.json'));
    expect([run.code, run.stdout]).toEqual([0, 'handoff NORMAL · ctx 10%\n']);
    const readings = (await cli(daemon.stateDir, ['status', '--json'], repo)).json.data?.['readings'];
    expect(readings).toEqual([expect.objectContaining({ source: 'copilot-statusline', metric: 'context', used_percent: 10 })]);
  });

  it("reads Qwen Code's own context share; its 0 for a model whose window it does not know is no reading", async () => {
    const repo = tempRepo();
    const payload = (name: string) =>
      readFileSync(new URL(`../fixtures/telemetry/qwen/${name}`, import.meta.url), 'utf8').replaceAll('/home/dev/src/acme-api', repo);
    expect((await hook('qwen-statusline', payload('statusline-0.24.4-unknown-window.json'))).stdout).toBe('handoff NORMAL\n');
    expect((await hook('qwen-statusline', payload('statusline-0.24.4-after-turn.json'))).stdout).toBe('handoff NORMAL · ctx 0.8%\n');
  });
});

describe('handoff hook claude-guard', () => {
  it('denies Edit and Write to a session without the lease in EVACUATE, and allows the holder', async () => {
    const repo = tempRepo();
    await cli(daemon.stateDir, ['lease', 'acquire', '--as', 'holder-session', '--json'], repo);
    // An agent at work (a status line reading of its session): the drain then waits for its
    // `handoff drained`, so EVACUATE lasts through the test instead of racing on to HANDOFF_READY.
    expect((await hook('claude-statusline', statuslinePayload(repo, 50))).code).toBe(0);
    await evacuate(repo);
    expect(await state(repo)).toBe('EVACUATE');
    for (const tool of ['Edit', 'Write']) {
      const run = await hook('claude-guard', toolCall(repo, 'other-session', tool));
      expect(run.code).toBe(0);
      const decision = JSON.parse(run.stdout) as {
        hookSpecificOutput: { hookEventName: string; permissionDecision: string; permissionDecisionReason: string };
      };
      expect(decision.hookSpecificOutput).toMatchObject({ hookEventName: 'PreToolUse', permissionDecision: 'deny' });
      expect(decision.hookSpecificOutput.permissionDecisionReason).toMatch(
        /is in EVACUATE: .*This session \(other-session\) does not hold its lease \(the lease is held by 'holder-session'\)/,
      );
      expect(decision.hookSpecificOutput.permissionDecisionReason).toMatch(/handoff drained/);
    }
    // A file in a directory that does not exist yet still belongs to the repository.
    expect(JSON.parse((await hook('claude-guard', toolCall(repo, 'other-session', 'Write', 'new/dir/file.ts'))).stdout)).toMatchObject({
      hookSpecificOutput: { permissionDecision: 'deny' },
    });
    expect((await hook('claude-guard', toolCall(repo, 'holder-session', 'Edit'))).stdout).toBe('{}\n');
    // Reading and the shell stay open: the agent must still run `handoff drained`.
    expect((await hook('claude-guard', toolCall(repo, 'other-session', 'Read'))).stdout).toBe('{}\n');
    expect((await hook('claude-guard', toolCall(repo, 'other-session', 'Bash'))).stdout).toBe('{}\n');
  });

  it('allows Edit and Write in NORMAL, whoever asks', async () => {
    const repo = tempRepo();
    expect(await state(repo)).toBe('NORMAL');
    for (const tool of ['Edit', 'Write', 'MultiEdit', 'NotebookEdit']) {
      const run = await hook('claude-guard', toolCall(repo, 'any-session', tool));
      expect([run.code, run.stdout]).toEqual([0, '{}\n']);
    }
  });

  it("judges the repository of the file, not of the session's cwd", async () => {
    const evacuating = tempRepo();
    const elsewhere = tempRepo();
    await evacuate(evacuating);
    const call = JSON.stringify({ session_id: 's', cwd: elsewhere, tool_name: 'Edit', tool_input: { file_path: join(evacuating, 'README.md') } });
    expect(JSON.parse((await hook('claude-guard', call)).stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
  });

  it('with no daemon or a garbage payload it allows, tells the person (systemMessage) and stderr, and exits 0', async () => {
    const down = await piped(['hook', 'claude-guard', '--state-dir', nobody()], toolCall(tempRepo(), 's', 'Edit'));
    expect(down.code).toBe(0);
    expect(JSON.parse(down.stdout)).toEqual({ systemMessage: 'handoff: daemon down; the lease guard is not enforcing' });
    expect(down.stderr).toMatch(/daemon down; the lease guard is not enforcing/);
    const garbage = await hook('claude-guard', 'nonsense');
    expect(garbage.code).toBe(0);
    expect(JSON.parse(garbage.stdout)).toEqual({ systemMessage: expect.stringMatching(/not a JSON object; the lease guard is not enforcing/) as unknown });
    expect(garbage.stderr).toMatch(/not a JSON object/);
  });
});

describe('handoff hook claude-session-start and claude-event', () => {
  it('SessionStart prints nothing until a handoff is ready, then a short pointer to it', async () => {
    const repo = tempRepo();
    const payload = fixtureText('claude-hooks/SessionStart.startup.json').replaceAll('/home/dev/acme-api', repo);
    const run = await hook('claude-session-start', payload);
    expect([run.code, run.stdout]).toEqual([0, '']);
    await evacuate(repo);
    expect((await hook('claude-session-start', payload)).stdout).toBe('');
    await cli(daemon.stateDir, ['drained', '--json'], repo);
    await until('HANDOFF_READY', async () => ((await state(repo)) === 'HANDOFF_READY' ? true : undefined));
    const { id: cycle } = (await cli(daemon.stateDir, ['status', '--json'], repo)).json.data?.['cycle'] as { id: string };
    const pointer = await hook('claude-session-start', payload);
    expect(pointer.code).toBe(0);
    expect(pointer.stdout).toContain(`.session-handoff/${cycle}/HANDOFF.md`);
    expect(pointer.stdout).toContain(`handoff accept ${cycle} --as 3f0c9a52-7d1e-4b6a-9c2e-5a1b8f0d4e21`);
    expect(Buffer.byteLength(pointer.stdout)).toBeLessThan(1024);
    const down = await piped(['hook', 'claude-session-start', '--state-dir', nobody()], payload);
    expect([down.code, down.stdout]).toEqual([0, '']);
  });

  it('a StopFailure on a rate limit, handed off by claude-event, evacuates and prints nothing', async () => {
    const repo = tempRepo();
    const payload = fixtureText('claude-hooks/StopFailure.rate_limit.json').replaceAll('/home/dev/acme-api', repo);
    const run = await hook('claude-event', payload);
    expect([run.code, run.stdout, run.stderr]).toEqual([0, '', '']);
    // The daemon takes the spooled payload as it appears. Evacuating; with no agent session seen
    // working (the one that failed stopped), the drain runs at once.
    await until('evacuating', async () => (['EVACUATE', 'HANDOFF_READY'].includes(await state(repo)) ? true : undefined));
  });

  it('an unknown hook is a usage error (64); global options before `hook` reach it through commander', async () => {
    const unknown = await hook('claude-nonsense', '');
    expect(unknown.code).toBe(64);
    expect(unknown.stderr).toMatch(/usage: handoff hook \(claude-statusline \| claude-guard/);
    const repo = tempRepo();
    const run = await piped(['--state-dir', daemon.stateDir, 'hook', 'claude-statusline'], statuslinePayload(repo, 85));
    expect(run.stdout).toBe('handoff PREPARE · 5h 85% · ctx 59%\n');
  });
});
