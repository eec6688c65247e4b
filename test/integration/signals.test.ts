import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, cli, startDaemon, until, type DaemonProcess } from '../support/daemon.js';
import { tempRepo } from '../support/git.js';

let daemon: DaemonProcess;
beforeAll(async () => {
  daemon = await startDaemon();
});
afterAll(async () => {
  await daemon.stop();
});

const future = () => String(Math.floor(Date.now() / 1000) + 3600);

async function state(repo: string): Promise<string> {
  const status = await cli(daemon.stateDir, ['status', '--json'], repo);
  return String(status.json.data?.['state']);
}

async function signal(repo: string, metric: string, percent: string, ...extra: string[]) {
  return cli(daemon.stateDir, ['signal', '--json', '--source', 'claude-statusline', '--metric', metric, '--used-percent', percent, ...extra], repo);
}

describe('handoff status and signals against a real daemon', () => {
  it('prints the Envelope with state NORMAL, then moves to PREPARE at 82 and EVACUATE at 93', async () => {
    const repo = tempRepo();
    const status = await cli(daemon.stateDir, ['status', '--json'], repo);
    expect(status.code).toBe(0);
    expect(status.json).toMatchObject({ code: 'status', authority: 'none', data: { workspace: repo, state: 'NORMAL', pressure: null } });

    const prepare = await signal(repo, 'five_hour', '82', '--resets-at', future());
    expect(prepare.json).toMatchObject({ code: 'reading_recorded', data: { state: 'PREPARE' } });
    const evacuate = await signal(repo, 'five_hour', '93', '--resets-at', future());
    expect(evacuate.json).toMatchObject({ code: 'reading_recorded', data: { state: 'EVACUATE' } });

    const after = await cli(daemon.stateDir, ['status', '--json'], repo);
    expect(after.json.data).toMatchObject({ state: 'EVACUATE', pressure: { percent: 93, metric: 'five_hour', source: 'claude-statusline' } });
    const cycle = after.json.data?.['cycle'] as { id: string; trigger: { kind: string } };
    expect(cycle.id).toMatch(/^[0-9]{8}T[0-9]{6}Z-[a-z2-7]{6}$/);
    expect(cycle.trigger.kind).toBe('telemetry');
  });

  it('routes by the directory: a subdirectory belongs to its git root', async () => {
    const repo = tempRepo();
    const { mkdirSync } = await import('node:fs');
    mkdirSync(`${repo}/src/deep`, { recursive: true });
    await signal(`${repo}/src/deep`, 'context', '85');
    expect(await state(repo)).toBe('PREPARE');
  });

  it.each([
    ['an unknown percent', ['unknown'], 'reading_not_credible', 0, /unknown/],
    ['a resets_at in the past', ['95', '--resets-at', '1787234400'], 'reading_not_credible', 0, /reset at 2026-08-20T14:00:00.000Z, which has passed/],
  ])('a reading with %s changes nothing and says why', async (_what, args, code, exit, why) => {
    const repo = tempRepo();
    const [percent, ...extra] = args as [string, ...string[]];
    const result = await signal(repo, 'five_hour', percent, ...extra);
    expect(result.code).toBe(exit);
    expect(result.json.code).toBe(code);
    expect(String(result.json.data?.['note'])).toMatch(why);
    expect(result.json.data?.['changed']).toBe(false);
    const status = await cli(daemon.stateDir, ['status', '--json'], repo);
    expect(status.json.data).toMatchObject({ state: 'NORMAL', readings: [] });
  });

  it('a reading from an unknown source is refused (64) and names the accepted sources in the CLI’s words', async () => {
    const repo = tempRepo();
    const result = await cli(daemon.stateDir, ['signal', '--json', '--source', 'my-guess', '--metric', 'five_hour', '--used-percent', '95'], repo);
    expect(result.code).toBe(64);
    expect(result.json.code).toBe('usage_error');
    expect(result.json.error?.hint).toMatch(/use one of: claude-statusline/);
    expect(await state(repo)).toBe('NORMAL');
  });

  it('PREPARE falls back to NORMAL only when every credible reading is below 80 − 5', async () => {
    const repo = tempRepo();
    await signal(repo, 'five_hour', '85', '--resets-at', future());
    await signal(repo, 'context', '77');
    expect(await state(repo)).toBe('PREPARE');
    await signal(repo, 'five_hour', '60', '--resets-at', future());
    expect(await state(repo)).toBe('PREPARE');
    await signal(repo, 'context', '75');
    expect(await state(repo)).toBe('PREPARE');
    await signal(repo, 'context', '74');
    expect(await state(repo)).toBe('NORMAL');
  });

  it('a provider warning goes straight to EVACUATE, where the drain waits for `handoff drained`', async () => {
    const repo = tempRepo();
    // An agent session at work: the drain has someone to wait for.
    await api(daemon, 'POST', '/v1/signals', { repo, source: 'claude-statusline', metric: 'context', used_percent: 30, executor: 'session-1' });
    const result = await cli(daemon.stateDir, ['signal', '--json', '--source', 'claude-hook', '--warning', '429 rate limited', '--kind', 'rate_limit'], repo);
    expect(result.json).toMatchObject({ code: 'warning_recorded', data: { state: 'EVACUATE' } });
    const status = await cli(daemon.stateDir, ['status', '--json'], repo);
    expect(status.json.data?.['cycle']).toMatchObject({ trigger: { kind: 'provider_warning' }, drain: { waited: null, no_wait: false } });
    // Waiting for the agent is not an interruption.
    expect((await cli(daemon.stateDir, ['check', '--json'], repo)).code).toBe(0);
    expect((await cli(daemon.stateDir, ['drained', '--json'], repo)).code).toBe(0);
    const ready = await until('HANDOFF_READY', async () => {
      const s = await cli(daemon.stateDir, ['status', '--json'], repo);
      return s.json.data?.['state'] === 'HANDOFF_READY' ? s.json.data : undefined;
    });
    expect(ready['cycle']).toMatchObject({ drain: { waited: { why: 'drained' } } });
    expect((await cli(daemon.stateDir, ['check', '--json'], repo)).code).toBe(2);
  });

  it('handoff prepare and handoff now --no-wait move by hand; status for humans names the next step', async () => {
    const repo = tempRepo();
    expect((await cli(daemon.stateDir, ['prepare', '--json', '--reason', 'long refactor'], repo)).json).toMatchObject({
      code: 'prepare_entered',
      data: { state: 'PREPARE' },
    });
    const now = await cli(daemon.stateDir, ['now', '--json', '--no-wait', '--reason', 'machine must go'], repo);
    expect(now.code).toBe(0);
    expect(now.json).toMatchObject({ code: 'handoff_ready', data: { state: 'HANDOFF_READY' } });
    const again = await cli(daemon.stateDir, ['prepare', '--json'], repo);
    expect(again.code).toBe(10);
    expect(again.json.code).toBe('wrong_state');
    const human = await cli(daemon.stateDir, ['status'], repo);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/state\s+HANDOFF_READY/);
    expect(human.stdout).toMatch(/manual: machine must go/);
    expect(human.stdout).toMatch(/^next\s+/m);
  });

  it('outside a git repository the CLI says so (64)', async () => {
    const { tempDir } = await import('../support/git.js');
    const result = await cli(daemon.stateDir, ['status', '--json'], tempDir('plain'));
    expect(result.code).toBe(64);
    expect(result.json.code).toBe('not_a_repository');
    expect(result.json.error?.hint).toMatch(/--repo/);
  });
});
