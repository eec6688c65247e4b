import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compose, FakeClock } from '../fault/support/compose.js';
import { readJournal } from '../fault/support/journal-read.js';
import { tempDir, tempRepo } from '../support/git.js';

/**
 * The composition daemon/main.ts runs (daemon/compose-daemon.ts), built without listening: what main
 * starts besides the HTTP app — the repeating work, the Codex tail — runs here too, on the test's clock.
 */
describe('composeDaemon', () => {
  it('puts the readings write, the lease sync and the rehearsal check on the injected clock: the write runs at its interval, close cancels them', async () => {
    const repo = tempRepo();
    const clock = new FakeClock(Date.parse('2026-03-01T00:00:00Z'));
    const daemon = await compose({ stateDir: join(tempDir('compose'), 'state'), clock });
    try {
      // readings_flush_seconds (5 by default), lease_sync_seconds (30) and the rehearsal's check (at most
      // every 60 s; it rehearses nothing while disabled): the three intervals main.ts starts.
      expect(clock.repeatingTasks).toBe(3);
      const reading = await daemon.inject('POST', '/v1/signals', { repo, source: 'claude-statusline', metric: 'five_hour', used_percent: 12 });
      expect({ status: reading.status, code: reading.body.code, durable: reading.body.data?.['durable'] }).toEqual({
        status: 200,
        code: 'reading_recorded',
        durable: false,
      });
      const size = () => statSync(daemon.journalPath, { throwIfNoEntry: false })?.size ?? 0;
      const before = size();
      await clock.tick(4);
      expect(size(), 'not written before the interval').toBe(before);
      await clock.tick(1);
      expect(size(), 'written at the interval').toBeGreaterThan(before);
      const last = readJournal(daemon.journalPath).raw.at(-1) as { root?: string };
      expect(last.root).toBe(repo);
      expect(JSON.stringify(last)).toContain('"used_percent":12');
    } finally {
      await daemon.close();
    }
    expect(clock.repeatingTasks, 'close cancels the repeating work').toBe(0);
  });

  it('starts the Codex tail and answers status with it, as the daemon does', async () => {
    const repo = tempRepo();
    const daemon = await compose({ stateDir: join(tempDir('compose'), 'state'), clock: new FakeClock(Date.parse('2026-03-01T00:00:00Z')) });
    try {
      const status = await daemon.inject('GET', `/v1/status?repo=${encodeURIComponent(repo)}`);
      expect(status.status).toBe(200);
      expect((status.body.data?.['daemon'] as { codex_tail: unknown }).codex_tail).toMatchObject({
        state: 'on',
        codex_home: join(daemon.stateDir, 'codex-home'),
      });
    } finally {
      await daemon.close();
    }
  });
});
