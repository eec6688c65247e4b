import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, startDaemon, until, type DaemonProcess } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';

const CORPUS = new URL('../fixtures/telemetry/', import.meta.url);
const corpus = (path: string) => readFileSync(new URL(path, CORPUS), 'utf8');

interface Status {
  state: string;
  warnings: { kind: string; source: string; recovers: boolean | null }[];
}

const status = async (daemon: DaemonProcess, repo: string) => (await cli(daemon.stateDir, ['status', '--json'], repo)).json.data as unknown as Status;

/** Records of a corpus outfile, moved to `now` (an error from long ago is history, not news), as the file exporter writes them. */
function recordsAt(file: string, now: Date): string[] {
  return corpus(file)
    .split(/\n(?=\{\n)/)
    .map((text) => {
      const record = JSON.parse(text) as { attributes: Record<string, unknown>; hrTime: number[]; hrTimeObserved?: number[] };
      record.attributes['event.timestamp'] = now.toISOString();
      record.hrTime = record.hrTimeObserved = [Math.floor(now.getTime() / 1000), 0];
      return `${JSON.stringify(record, null, 2)}\n`;
    });
}

describe('the Gemini CLI outfile tail', () => {
  it('records appended to a configured outfile reach the daemon without a command: the daily quota 429 moves the repository; its history is not read', async () => {
    const repo = tempRepo();
    mkdirSync(join(repo, '.gemini'));
    const outfile = join(repo, '.gemini', 'telemetry.log');
    // A recent 429 already in the file when the daemon starts: history, never read.
    writeFileSync(outfile, recordsAt('gemini/telemetry.log', new Date()).join(''));
    const stateDir = tempDir('state');
    writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ gemini: { telemetry_outfiles: [{ outfile }] } }));
    const daemon = await startDaemon(stateDir, { CODEX_HOME: tempDir('codex') });
    try {
      expect((await status(daemon, repo)).state).toBe('NORMAL');
      const [request, apiError] = recordsAt('gemini/telemetry-0.61.api-error-per-day.log', new Date());
      appendFileSync(outfile, request ?? '');
      // The 429 caught mid-write: half a record is not read until its end is there.
      const half = Math.floor((apiError ?? '').length / 2);
      appendFileSync(outfile, (apiError ?? '').slice(0, half));
      appendFileSync(outfile, (apiError ?? '').slice(half));
      const after = await until('the warning', async () => {
        const now = await status(daemon, repo);
        return now.warnings.length > 0 ? now : undefined;
      });
      expect(after.warnings.map((w) => [w.source, w.kind, w.recovers])).toEqual([['gemini-telemetry', 'insufficient_quota', false]]);
      expect(['EVACUATE', 'HANDOFF_READY']).toContain(after.state);
    } finally {
      await daemon.stop();
    }
    // The offset was kept at the last record's end: a restart reads nothing again.
    const saved = JSON.parse(readFileSync(join(stateDir, 'gemini-offsets.json'), 'utf8')) as { files: Record<string, { offset: number }> };
    expect(
      readFileSync(outfile)
        .subarray(saved.files[outfile]?.offset ?? 0)
        .toString(),
    ).toBe('\n');
  });
});
