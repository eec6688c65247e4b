import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, until, type DaemonProcess } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';
import { piped, statuslinePayload } from './ingest-support.js';

let daemon: DaemonProcess;
const FLUSH_SECONDS = 1;
beforeAll(async () => {
  const stateDir = tempDir('state');
  chmodSync(stateDir, 0o700);
  // Readings that move nothing are journaled coalesced, once per flush period.
  writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ journal: { readings_flush_seconds: FLUSH_SECONDS } }));
  daemon = await startDaemon(stateDir);
});
const settle = () => new Promise((resolve) => setTimeout(resolve, FLUSH_SECONDS * 1000 + 500));
afterAll(async () => {
  await daemon.stop();
});

interface ReadingView {
  source: string;
  metric: string;
  executor: string | null;
  used_percent: number;
  observed_at: string;
}

describe('a status line refreshed on a timer (statusLine.refreshInterval) is not new evidence', () => {
  it('the same session, numbers and window again: unchanged, nothing journaled, the observation keeps its time', async () => {
    const repo = tempRepo();
    // One payload, as Claude Code sends it again on each refresh until its next API response.
    const payload = statuslinePayload(repo, 42, { session: 'session-r' });
    const first = await piped(['--state-dir', daemon.stateDir, 'ingest', 'claude-statusline', '--json'], payload);
    expect((JSON.parse(first.stdout) as { data: { recorded: unknown[] } }).data.recorded.length).toBeGreaterThan(0);
    const readings = async () =>
      ((await cli(daemon.stateDir, ['status', '--json'], repo)).json.data?.['readings'] as ReadingView[]).filter((r) => r.executor === 'session-r');
    const before = await readings();
    const journal = join(daemon.stateDir, 'journal.jsonl');
    // The first reading's coalesced write lands within a flush period.
    await until('the first reading journaled', async () => (readFileSync(journal, 'utf8').includes('session-r') ? true : undefined));
    const size = statSync(journal).size;
    for (let i = 0; i < 3; i += 1) {
      const again = JSON.parse((await piped(['--state-dir', daemon.stateDir, 'ingest', 'claude-statusline', '--json'], payload)).stdout) as {
        data: { recorded: unknown[]; unchanged: unknown[] };
      };
      expect([again.data.recorded.length, again.data.unchanged.length]).toEqual([0, before.length]);
    }
    // A flush period later: nothing new to write.
    await settle();
    expect(statSync(journal).size).toBe(size);
    expect(await readings()).toEqual(before.map((reading) => ({ ...reading, age_seconds: expect.any(Number) as unknown })));
  });

  it('another session with the same numbers is its own evidence', async () => {
    const repo = tempRepo();
    await piped(['--state-dir', daemon.stateDir, 'ingest', 'claude-statusline', '--json'], statuslinePayload(repo, 42, { session: 'one' }));
    const other = JSON.parse(
      (await piped(['--state-dir', daemon.stateDir, 'ingest', 'claude-statusline', '--json'], statuslinePayload(repo, 42, { session: 'two' }))).stdout,
    ) as {
      data: { recorded: unknown[]; unchanged: unknown[] };
    };
    expect([other.data.recorded.length > 0, other.data.unchanged.length]).toEqual([true, 0]);
  });
});
