import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { api, cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { tempDir } from '../support/git.js';
import { busyRepo } from '../support/scenario.js';

/** Full count on demand (HANDOFF_TEST_SESSIONS); the 10,000 by default. */
const SESSIONS = Number(process.env['HANDOFF_TEST_SESSIONS'] ?? 10_000);
const CONCURRENCY = 16;
/** The smallest compaction threshold the config allows, so the run compacts many times. */
const COMPACT_AFTER = 65_536;

let daemon: DaemonProcess | null = null;
afterAll(async () => {
  await daemon?.stop();
});

describe('state that stays bounded', () => {
  it(
    `${SESSIONS} agent sessions through one repository: the live state and the journal stay small, a restart is quick, and handoff now still reaches HANDOFF_READY`,
    { timeout: 600_000 },
    async () => {
      const { root } = busyRepo();
      const stateDir = join(tempDir('bounded'), 'state');
      mkdirSync(stateDir, { mode: 0o700 });
      writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ journal: { compact_after_bytes: COMPACT_AFTER, readings_flush_seconds: 1 } }));
      daemon = await startDaemon(stateDir);
      const journalSize = () => statSync(join(stateDir, 'journal.jsonl')).size;
      let largestJournal = 0;
      let next = 0;
      const worker = async (d: DaemonProcess) => {
        for (let i = next++; i < SESSIONS; i = next++) {
          // Each Claude Code session reports its own context and the account's windows, as a status line does.
          for (const metric of ['context', 'five_hour', 'seven_day']) {
            const got = await api(d, 'POST', '/v1/signals', {
              repo: root,
              source: 'claude-statusline',
              metric,
              used_percent: 20 + (i % 50),
              executor: `session-${i}`,
            });
            expect(got.body.code, got.text).toBe('reading_recorded');
          }
          // Lease churn: changes that must be journaled, so the journal grows and is compacted.
          if (i % 25 === 0) {
            const acquired = await api(d, 'POST', '/v1/lease/acquire', { repo: root, as: `session-${i}` });
            if (acquired.body.code === 'lease_acquired') {
              await api(d, 'POST', '/v1/lease/release', { repo: root, token: (acquired.body.data as { token: number }).token });
            }
            largestJournal = Math.max(largestJournal, journalSize());
          }
        }
      };
      const d = daemon;
      await Promise.all(Array.from({ length: CONCURRENCY }, () => worker(d)));

      const status = await cli(stateDir, ['status', '--json'], root);
      const readings = (status.json.data as { readings: unknown[] }).readings;
      expect(readings.length).toBeLessThanOrEqual(64);
      expect(largestJournal, 'the journal is compacted as it grows').toBeLessThan(4 * COMPACT_AFTER);
      expect(readFileSync(join(stateDir, 'daemon.log'), 'utf8')).toMatch(/journal compacted/);

      await daemon.stop();
      daemon = await startDaemon(stateDir);
      expect((await cli(stateDir, ['status', '--json'], root)).json.code).toBe('status');
      const now = await cli(stateDir, ['now', '--no-wait', '--reason', 'after ten thousand sessions', '--json'], root);
      expect(now.json.code, JSON.stringify(now.json)).toBe('handoff_ready');
      expect(journalSize()).toBeLessThan(4 * COMPACT_AFTER);
    },
  );
});
