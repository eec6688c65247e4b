import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, startDaemon } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';

describe('the lease', () => {
  it('A acquires; B is denied (77); a stale token is refused (77); a break is recorded in the journal and status', async () => {
    const daemon = await startDaemon();
    try {
      const repo = tempRepo();
      const a = await cli(daemon.stateDir, ['lease', 'acquire', '--as', 'agent-a', '--json'], repo);
      expect(a.code).toBe(0);
      expect(a.json).toMatchObject({ code: 'lease_acquired', data: { token: 1 } });

      const b = await cli(daemon.stateDir, ['lease', 'acquire', '--as', 'agent-b', '--json'], repo);
      expect(b.code).toBe(77);
      expect(b.json.code).toBe('lease_held');
      expect(b.json.error?.message).toMatch(/agent-a/);

      const stale = await cli(daemon.stateDir, ['lease', 'release', '--token', '7', '--json'], repo);
      expect(stale.code).toBe(77);
      expect(stale.json.code).toBe('stale_token');

      expect((await cli(daemon.stateDir, ['lease', 'renew', '--token', '1', '--json'], repo)).json.code).toBe('lease_renewed');

      const broken = await cli(daemon.stateDir, ['lease', 'break', '--reason', 'agent-a crashed', '--json'], repo);
      expect(broken.json).toMatchObject({ code: 'lease_broken', data: { last_break: { reason: 'agent-a crashed', executor: 'agent-a', token: 1 } } });

      // The broken holder's token is now stale; the next holder gets a fresh, larger token.
      expect((await cli(daemon.stateDir, ['lease', 'renew', '--token', '1', '--json'], repo)).code).toBe(77);
      expect((await cli(daemon.stateDir, ['lease', 'acquire', '--as', 'agent-b', '--json'], repo)).json.data?.['token']).toBe(2);

      const status = await cli(daemon.stateDir, ['status', '--json'], repo);
      expect(status.json.data?.['lease']).toMatchObject({ holder: { executor: 'agent-b', token: 2 }, last_break: { reason: 'agent-a crashed' } });
      const human = await cli(daemon.stateDir, ['status'], repo);
      expect(human.stdout).toMatch(/broken .* by an operator: agent-a crashed/);

      const journal = readFileSync(join(daemon.stateDir, 'journal.jsonl'), 'utf8');
      const breaks = journal.split('\n').filter((line) => line.includes('"LEASE_BREAK"'));
      expect(breaks).toHaveLength(1);
      expect(breaks[0]).toContain('agent-a crashed');

      const show = await cli(daemon.stateDir, ['lease', '--json'], repo);
      expect(show.json).toMatchObject({ code: 'lease_shown', data: { holder: { executor: 'agent-b' } } });
    } finally {
      await daemon.stop();
    }
  });
});

describe('kill -9 and restart', () => {
  it('restores state, readings and lease; the next token is greater than every token issued before', async () => {
    const stateDir = tempDir('state');
    const repo = tempRepo();
    const first = await startDaemon(stateDir);
    const resets = String(Math.floor(Date.now() / 1000) + 3600);
    await cli(stateDir, ['signal', '--json', '--source', 'codex-rollout', '--metric', 'weekly', '--used-percent', '84', '--resets-at', resets], repo);
    let lastToken = 0;
    for (const who of ['a', 'b', 'c']) {
      const got = await cli(stateDir, ['lease', 'acquire', '--as', who, '--json'], repo);
      lastToken = Number(got.json.data?.['token']);
      if (who !== 'c') await cli(stateDir, ['lease', 'release', '--token', String(lastToken), '--json'], repo);
    }
    const before = (await cli(stateDir, ['status', '--json'], repo)).json.data as Record<string, unknown>;
    expect(before['state']).toBe('PREPARE');
    await first.kill9();

    const second = await startDaemon(stateDir);
    try {
      expect(second.pid).not.toBe(first.pid);
      const after = (await cli(stateDir, ['status', '--json'], repo)).json.data as Record<string, unknown>;
      expect(after['state']).toBe('PREPARE');
      expect(after['lease']).toEqual(before['lease']);
      const strip = (readings: unknown) => (readings as { age_seconds: number }[]).map(({ age_seconds: _age, ...rest }) => rest);
      expect(strip(after['readings'])).toEqual(strip(before['readings']));
      expect((await cli(stateDir, ['lease', 'renew', '--token', String(lastToken), '--json'], repo)).json.code).toBe('lease_renewed');
      await cli(stateDir, ['lease', 'release', '--token', String(lastToken), '--json'], repo);
      const next = await cli(stateDir, ['lease', 'acquire', '--as', 'd', '--json'], repo);
      expect(Number(next.json.data?.['token'])).toBeGreaterThan(lastToken);
    } finally {
      await second.stop();
    }
  });

  it('a torn last journal record (a crash mid-write) is cut off and the daemon starts', async () => {
    const stateDir = tempDir('state');
    const repo = tempRepo();
    const first = await startDaemon(stateDir);
    await cli(stateDir, ['prepare', '--json'], repo);
    await first.kill9();
    const { appendFileSync } = await import('node:fs');
    appendFileSync(join(stateDir, 'journal.jsonl'), '0badc0de {"kind":"workspace","root":');
    const second = await startDaemon(stateDir);
    try {
      expect((await cli(stateDir, ['status', '--json'], repo)).json.data?.['state']).toBe('PREPARE');
      expect(readFileSync(join(stateDir, 'journal.jsonl'), 'utf8').endsWith('\n')).toBe(true);
    } finally {
      await second.stop();
    }
  });

  it('a corrupt record in the middle of the journal stops the daemon with 74 and changes nothing', async () => {
    const stateDir = tempDir('state');
    const repo = tempRepo();
    const first = await startDaemon(stateDir);
    await cli(stateDir, ['prepare', '--json'], repo);
    await cli(stateDir, ['lease', 'acquire', '--as', 'x', '--json'], repo);
    await first.stop();
    const path = join(stateDir, 'journal.jsonl');
    const lines = readFileSync(path, 'utf8').split('\n');
    // The PREPARE change, with the lease's record after it (the workspace's base snapshot comes first).
    const damagedLine = lines.findIndex((line) => line.includes('"PREPARE"'));
    expect(damagedLine).toBeGreaterThanOrEqual(0);
    expect(damagedLine).toBeLessThan(lines.length - 2);
    lines[damagedLine] = String(lines[damagedLine]).replace('"PREPARE"', '"PREPARX"');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path, lines.join('\n'));
    const damaged = readFileSync(path);
    const result = await cli(stateDir, ['daemon', '--json']);
    expect(result.code).toBe(74);
    expect(result.json.code).toBe('corrupt_record');
    expect(result.json.error?.message).toMatch(new RegExp(`line ${damagedLine + 1}\\b`));
    expect(readFileSync(path).equals(damaged)).toBe(true);
  });
});
