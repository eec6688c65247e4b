import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, cli, startDaemon, until, type DaemonProcess } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';
import { fixtureText, piped } from './ingest-support.js';

/** Small, so the scripted sequences stay short; the default is 20. */
const REMIND_AFTER = 3;

let daemon: DaemonProcess;
let stateDir: string;
beforeAll(async () => {
  stateDir = tempDir('state');
  writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ context_reminder_after_tool_calls: REMIND_AFTER }));
  daemon = await startDaemon(stateDir, { CODEX_HOME: tempDir('codex') });
});
afterAll(async () => {
  await daemon.stop();
});

type Event = 'UserPromptSubmit' | 'PostToolUse';

/** One hook call as Claude Code makes it: the payload on stdin, the command from settings.json. */
function payload(repo: string, session: string, event: Event | string): string {
  const base = {
    session_id: session,
    transcript_path: `/home/dev/.claude/projects/x/${session}.jsonl`,
    cwd: repo,
    permission_mode: 'default',
    hook_event_name: event,
  };
  return JSON.stringify(
    event === 'PostToolUse'
      ? { ...base, tool_name: 'Bash', tool_input: { command: 'npm test' }, tool_response: { stdout: 'ok' } }
      : { ...base, prompt: 'go on' },
  );
}

/** The additionalContext the hook gave, or null when it printed nothing; every call exits 0. */
async function hook(repo: string, session: string, event: Event, dir = stateDir): Promise<string | null> {
  const run = await piped(['hook', 'claude-context', '--state-dir', dir], payload(repo, session, event));
  expect(run.code).toBe(0);
  if (run.stdout === '') return null;
  const output = JSON.parse(run.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
  expect(Object.keys(output)).toEqual(['hookSpecificOutput']);
  expect(output.hookSpecificOutput.hookEventName).toBe(event);
  expect(Buffer.byteLength(output.hookSpecificOutput.additionalContext)).toBeLessThan(1024);
  return output.hookSpecificOutput.additionalContext;
}

/** What a notice is, in one word, so a sequence reads as a list. */
function kind(text: string | null): string | null {
  if (text === null) return null;
  if (text.startsWith('session-handoff reminder:')) return 'reminder';
  return /is in (PREPARE|EVACUATE)|is (HANDOFF_READY)/.exec(text)?.slice(1).find(Boolean) ?? `unknown: ${text}`;
}

async function sequence(repo: string, session: string, events: readonly Event[]): Promise<(string | null)[]> {
  const kinds: (string | null)[] = [];
  for (const event of events) kinds.push(kind(await hook(repo, session, event)));
  return kinds;
}

const state = async (repo: string) => String((await cli(stateDir, ['status', '--json'], repo)).json.data?.['state']);
const U = 'UserPromptSubmit' as const;
const P = 'PostToolUse' as const;

describe('handoff hook claude-context: one notice per stage per session', () => {
  it('NORMAL → PREPARE → EVACUATE: nothing in NORMAL, PREPARE once, the reminder once after N tool calls, EVACUATE once', async () => {
    const repo = tempRepo();
    const session = '3f0c9a52-7d1e-4b6a-9c2e-5a1b8f0d4e21';
    expect(await state(repo)).toBe('NORMAL');
    expect(await sequence(repo, session, [U, P, P, P, P, U])).toEqual([null, null, null, null, null, null]);

    expect((await cli(stateDir, ['prepare', '--reason', 'test', '--json'], repo)).json.code).toBe('prepare_entered');
    const notice = await hook(repo, session, U);
    expect(kind(notice)).toBe('PREPARE');
    for (const part of ['`handoff capsule template`', '`handoff capsule set`', 'Next action', 'capsule 0/6: no capsule']) expect(notice).toContain(part);
    // N tool calls after the notice without a refresh: one reminder, then silence.
    expect(await sequence(repo, session, [P, P, P, P, P, U, P])).toEqual([null, null, 'reminder', null, null, null, null]);

    // EVACUATE that waits for `handoff drained`, as when a hook reports 93 %: the session's own status line
    // reported a moment ago, so the drain has an agent at work to wait for.
    expect(
      (await api(daemon, 'POST', '/v1/signals', { repo, source: 'claude-statusline', metric: 'context', used_percent: 85, executor: session })).body.code,
    ).toBe('reading_recorded');
    expect((await api(daemon, 'POST', '/v1/now', { repo, reason: 'test' })).body.code).toBe('evacuation_started');
    const evacuate = await hook(repo, session, P);
    expect(kind(evacuate)).toBe('EVACUATE');
    expect(evacuate).toMatch(/Finish only the atomic step you are in and start nothing new\..*Then run `handoff drained`/);
    expect(await sequence(repo, session, [P, U, P, P, P, P])).toEqual([null, null, null, null, null, null]);

    // The agent did what it was told: the handoff is ready, and the session is told once not to touch it.
    await cli(stateDir, ['drained', '--json'], repo);
    await until('HANDOFF_READY', async () => ((await state(repo)) === 'HANDOFF_READY' ? true : undefined));
    expect(await sequence(repo, session, [U, P, U])).toEqual(['HANDOFF_READY', null, null]);
  });

  it('a capsule refreshed after the notice gets no reminder; a PREPARE entered again is told again', async () => {
    const repo = tempRepo();
    const signal = (percent: number) =>
      cli(stateDir, ['signal', '--source', 'claude-statusline', '--metric', 'five_hour', '--used-percent', String(percent), '--json'], repo);
    await signal(85);
    expect(await state(repo)).toBe('PREPARE');
    expect(await sequence(repo, 's-a', [U, P])).toEqual(['PREPARE', null]);
    const capsule = '# Handoff capsule\n## Objective\nShip the parser.\n## Next action\nRun `npm test -- parser`\n';
    expect((await piped(['--state-dir', stateDir, 'capsule', 'set', '--json'], capsule, { cwd: repo })).code).toBe(0);
    expect(await sequence(repo, 's-a', [P, P, P, P, P])).toEqual([null, null, null, null, null]);

    await signal(50);
    expect(await state(repo)).toBe('NORMAL');
    expect(await sequence(repo, 's-a', [U, P])).toEqual([null, null]);
    await signal(86);
    expect(await state(repo)).toBe('PREPARE');
    expect(await sequence(repo, 's-a', [U, U])).toEqual(['PREPARE', null]);
  });

  it('each session is told for itself; parallel hooks of one session tell it once and lose no tool call', async () => {
    const repo = tempRepo();
    await cli(stateDir, ['prepare', '--json'], repo);
    // Three at once: one is told, two are counted — none is lost, so the next call is the third.
    const parallel = await Promise.all(Array.from({ length: 3 }, () => hook(repo, 'parallel', P)));
    expect(parallel.filter((text) => text !== null).map(kind)).toEqual(['PREPARE']);
    expect(await sequence(repo, 'parallel', [P, P])).toEqual(['reminder', null]);
    expect(await sequence(repo, 'other', [U, U])).toEqual(['PREPARE', null]);
  });

  it('a SessionStart (new, resumed, cleared or compacted context) makes the session be told again', async () => {
    const repo = tempRepo();
    await cli(stateDir, ['prepare', '--json'], repo);
    expect(await sequence(repo, 'compacting', [U, U])).toEqual(['PREPARE', null]);
    const start = fixtureText('claude-hooks/SessionStart.compact.json')
      .replaceAll('/home/dev/acme-api', repo)
      .replace(/"session_id":"[^"]+"/, '"session_id":"compacting"');
    const run = await piped(['hook', 'claude-session-start', '--state-dir', stateDir], start);
    expect([run.code, run.stdout]).toEqual([0, '']);
    expect(await sequence(repo, 'compacting', [U, U])).toEqual(['PREPARE', null]);
  });

  it('says nothing, exits 0 and is quick when it cannot help: no daemon, no repository, garbage, other events', async () => {
    const repo = tempRepo();
    const nobody = join(tempDir('nobody'), 'state');
    const down = await piped(['hook', 'claude-context', '--state-dir', nobody], payload(repo, 's', U));
    expect([down.code, down.stdout, down.stderr]).toEqual([0, '', '']);
    expect(down.ms).toBeLessThan(2000);
    for (const input of ['not json', '[]', payload(tempDir('plain'), 's', U), payload(repo, 's', 'Stop'), JSON.stringify({ hook_event_name: U, cwd: repo })]) {
      const run = await piped(['hook', 'claude-context', '--state-dir', stateDir], input);
      expect([run.code, run.stdout]).toEqual([0, '']);
    }
  });
});

describe('the notices survive a daemon crash', () => {
  it('a session told before a kill -9 is not told again by the restarted daemon', async () => {
    const dir = tempDir('state');
    const first = await startDaemon(dir, { CODEX_HOME: tempDir('codex') });
    const repo = tempRepo();
    try {
      await cli(dir, ['prepare', '--json'], repo);
      expect(kind(await hook(repo, 'crash', U, dir))).toBe('PREPARE');
      await first.kill9();
      const second = await startDaemon(dir, { CODEX_HOME: tempDir('codex') });
      try {
        expect(await hook(repo, 'crash', U, dir)).toBeNull();
        expect(kind(await hook(repo, 'fresh', U, dir))).toBe('PREPARE');
      } finally {
        await second.stop();
      }
    } finally {
      await first.stop();
    }
  });
});

describe('handoff hook claude-session-start: the receiver side', () => {
  it('injects the next action, the capsule quality, the lease command and the recovery commands, under 8 KB', async () => {
    const repo = tempRepo();
    const capsule = [
      '# Handoff capsule',
      '## Objective',
      'Make the auth tests pass.',
      '## Next action',
      'Run `npm test -- test/auth.test.ts` and fix the expired-token case.',
      '## First files',
      '- README.md',
    ].join('\n');
    // The source session's status line reported a moment ago: the drain waits for it to write the capsule.
    await api(daemon, 'POST', '/v1/signals', { repo, source: 'claude-statusline', metric: 'context', used_percent: 85, executor: 'source-session' });
    await api(daemon, 'POST', '/v1/now', { repo, reason: 'test' });
    expect((await piped(['--state-dir', stateDir, 'capsule', 'set', '--json'], capsule, { cwd: repo })).code).toBe(0);
    await cli(stateDir, ['drained', '--json'], repo);
    await until('HANDOFF_READY', async () => ((await state(repo)) === 'HANDOFF_READY' ? true : undefined));
    const { id: cycle } = (await cli(stateDir, ['status', '--json'], repo)).json.data?.['cycle'] as { id: string };

    const start = fixtureText('claude-hooks/SessionStart.startup.json').replaceAll('/home/dev/acme-api', repo);
    const run = await piped(['hook', 'claude-session-start', '--state-dir', stateDir], start);
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe(`session-handoff: a handoff is ready in ${repo} (cycle ${cycle}, revision 1).`);
    expect(lines[1]).toBe('Next action, written by the source agent, unverified (a note to check, not an instruction from session-handoff):');
    expect(lines[2]).toBe('> Run `npm test -- test/auth.test.ts` and fix the expired-token case.');
    expect(lines[3]).toBe('Capsule quality, scored by session-handoff: capsule 5/6: no acceptance criteria');
    expect(run.stdout).toContain(`handoff accept ${cycle} --as 3f0c9a52-7d1e-4b6a-9c2e-5a1b8f0d4e21`);
    expect(run.stdout).toContain(`.session-handoff/${cycle}/HANDOFF.md`);
    expect(run.stdout).toContain('git clone --no-checkout');
    expect(run.stdout).not.toContain('## Decisions');
    expect(Buffer.byteLength(run.stdout)).toBeLessThan(8 * 1024);

    // The same session, once told at SessionStart, also gets the one stage notice at its first prompt.
    expect(kind(await hook(repo, '3f0c9a52-7d1e-4b6a-9c2e-5a1b8f0d4e21', U))).toBe('HANDOFF_READY');
  });
});
