import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manifest } from '../../schemas/index.js';
import { agentAtWork, api, cli, startDaemon, until, type DaemonProcess } from '../support/daemon.js';
import { tempDir } from '../support/git.js';
import { busyRepo } from '../support/scenario.js';
import { piped } from './ingest-support.js';

let daemon: DaemonProcess;
beforeAll(async () => {
  const stateDir = tempDir('state');
  chmodSync(stateDir, 0o700);
  writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ drain_timeout_seconds: 1 }));
  daemon = await startDaemon(stateDir);
});
afterAll(async () => {
  await daemon.stop();
});

describe('the drain wait and the capsule file', () => {
  it('without `handoff drained` the drain goes on after the timeout, and says why it stopped waiting', async () => {
    const { root } = busyRepo();
    await agentAtWork(daemon, root);
    const now = await cli(daemon.stateDir, ['now', '--json'], root);
    expect(now.json.code).toBe('handoff_ready');
    expect(now.json.data?.['cycle']).toMatchObject({ drain: { no_wait: false, waited: { why: 'timeout' } } });
  });

  it('with no agent session seen working there is nobody to wait for: the drain starts at once and says so', async () => {
    const { root } = busyRepo();
    // An operator's own signal names no session: it is not an agent at work.
    expect(
      (await cli(daemon.stateDir, ['signal', '--source', 'claude-statusline', '--metric', 'five_hour', '--used-percent', '40', '--json'], root)).json.code,
    ).toBe('reading_recorded');
    const now = await cli(daemon.stateDir, ['now', '--json'], root);
    expect(now.json.code).toBe('handoff_ready');
    expect(now.json.data?.['cycle']).toMatchObject({ drain: { no_wait: false, waited: { why: 'no_agent' } } });
    const cycle = String((now.json.data?.['cycle'] as { id: string }).id);
    const manifest = JSON.parse(readFileSync(join(root, '.session-handoff', cycle, 'manifest.json'), 'utf8')) as Manifest;
    expect(manifest.drain_wait).toBe('no_agent');
    expect(readFileSync(join(root, '.session-handoff', cycle, 'HANDOFF.md'), 'utf8')).toContain('No agent was draining');
  });

  it('an agent that edits .session-handoff/capsule.json itself is picked up; an invalid edit is reported, not used', async () => {
    const { root } = busyRepo();
    await cli(daemon.stateDir, ['status', '--json'], root);
    const file = join(root, '.session-handoff', 'capsule.json');
    writeFileSync(file, JSON.stringify({ objective: 'ship it', next_action: 'run the tests' }));
    const seen = await until('capsule picked up', async () => {
      const status = await cli(daemon.stateDir, ['status', '--json'], root);
      const capsule = status.json.data?.['capsule'] as { sha256: string | null; error: string | null } | null;
      return capsule?.sha256 ? capsule : undefined;
    });
    expect(seen.error).toBeNull();
    writeFileSync(file, JSON.stringify({ objective: 'ship it', next_action: ['two', 'actions'] }));
    const invalid = await until('invalid capsule reported', async () => {
      const status = await cli(daemon.stateDir, ['status', '--json'], root);
      const capsule = status.json.data?.['capsule'] as { error: string | null } | null;
      return capsule?.error ? capsule.error : undefined;
    });
    expect(invalid).toMatch(/capsule\.next_action/);
    const human = await cli(daemon.stateDir, ['status'], root);
    expect(human.stdout).toMatch(/capsule\s+INVALID: capsule\.next_action/);
    // A valid capsule again, then evacuate: the manifest carries it.
    writeFileSync(file, JSON.stringify({ objective: 'ship it', next_action: 'run the tests' }));
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
    const cycle = (now.json.data?.['cycle'] as { id: string }).id;
    const manifest = JSON.parse(readFileSync(join(root, '.session-handoff', cycle, 'manifest.json'), 'utf8')) as Manifest;
    expect(manifest).toMatchObject({ capsule_source: 'agent', capsule: { objective: 'ship it', next_action: 'run the tests' } });
  });

  it('handoff capsule set refuses an invalid capsule (65) and keeps the file as it was', async () => {
    const { root } = busyRepo();
    const bad = join(tempDir('capsule'), 'bad.json');
    writeFileSync(bad, JSON.stringify({ objective: 'x', estimate_percent: 42 }));
    const result = await cli(daemon.stateDir, ['capsule', 'set', '--file', bad, '--json'], root);
    expect(result.code).toBe(65);
    expect(result.json.error?.message).toMatch(/unknown field 'estimate_percent'/);
    expect((await cli(daemon.stateDir, ['capsule', 'show', '--json'], root)).json.data).toMatchObject({ capsule: null });
  });
});

describe('a hook event of a session is an agent at work for the drain wait', () => {
  // A long drain timeout: the wait is ended by `handoff drained`, never by the clock.
  let patient: DaemonProcess;
  beforeAll(async () => {
    const stateDir = tempDir('state');
    chmodSync(stateDir, 0o700);
    writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ drain_timeout_seconds: 600 }));
    patient = await startDaemon(stateDir);
  });
  afterAll(async () => {
    await patient.stop();
  });

  /** Readings from provider headers only (they name no session), then a rate-limit warning: EVACUATE. */
  async function evacuateOnHeaders(root: string): Promise<unknown> {
    await api(patient, 'POST', '/v1/signals', { repo: root, source: 'anthropic-headers', metric: 'five_hour', used_percent: 40 });
    const warned = await cli(patient.stateDir, ['signal', '--json', '--source', 'claude-hook', '--warning', '429 rate limited', '--kind', 'rate_limit'], root);
    expect(warned.json).toMatchObject({ code: 'warning_recorded', data: { state: 'EVACUATE' } });
    const status = await cli(patient.stateDir, ['status', '--json'], root);
    return status.json.data?.['cycle'];
  }

  it('PostToolUse through the installed hook: the drain waits for `handoff drained`', async () => {
    const { root } = busyRepo();
    const toolCall = JSON.stringify({
      session_id: 'session-7',
      cwd: root,
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'npm test' },
    });
    expect((await piped(['hook', 'claude-context', '--state-dir', patient.stateDir], toolCall)).code).toBe(0);
    expect(await evacuateOnHeaders(root)).toMatchObject({ drain: { waited: null } });
    expect((await cli(patient.stateDir, ['drained', '--json'], root)).code).toBe(0);
    const waited = await until('the wait ended by drained', async () => {
      const cycle = (await cli(patient.stateDir, ['status', '--json'], root)).json.data?.['cycle'] as { drain: { waited: { why: string } | null } };
      return cycle.drain.waited ?? undefined;
    });
    expect(waited.why).toBe('drained');
  });

  it('a SessionStart alone is not an agent at work: nobody to wait for', async () => {
    const { root } = busyRepo();
    const start = JSON.stringify({ session_id: 'session-8', cwd: root, hook_event_name: 'SessionStart', source: 'startup' });
    expect((await piped(['hook', 'claude-session-start', '--state-dir', patient.stateDir], start)).code).toBe(0);
    await evacuateOnHeaders(root);
    const waited = await until('the drain decided', async () => {
      const drain = ((await cli(patient.stateDir, ['status', '--json'], root)).json.data?.['cycle'] as { drain: { waited: { why: string } | null } }).drain;
      return drain.waited ?? undefined;
    });
    expect(waited.why).toBe('no_agent');
  });
});
