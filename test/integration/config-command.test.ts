import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from '../support/daemon.js';
import { tempDir } from '../support/git.js';

function config(stateDir: string, ...args: string[]): Promise<{ code: number; json: { code: string; data: Record<string, unknown> | null } }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, '--state-dir', stateDir, 'config', ...args, '--json'], { encoding: 'utf8' }, (error, stdout) => {
      resolve({ code: error ? Number(error.code) : 0, json: JSON.parse(stdout) as never });
    });
  });
}

describe('handoff config get|set', () => {
  it('set validates the whole file, writes only the keys set (0600), says when each applies; get fills defaults', async () => {
    const stateDir = join(tempDir('config'), 'state');
    const file = join(stateDir, 'config.json');
    const set = await config(stateDir, 'set', 'pressure.prepare_percent', '70');
    expect([set.code, set.json.data]).toEqual([
      0,
      { key: 'pressure.prepare_percent', value: 70, file, applies: 'at the next daemon start (`handoff daemon stop`; the next command starts it again)' },
    ]);
    expect((await config(stateDir, 'set', 'auto_start', 'false')).json.data?.['applies']).toBe('now');
    expect((await config(stateDir, 'set', 'validation.command', 'npm test')).json.data?.['value']).toBe('npm test');
    const written = readFileSync(file, 'utf8');
    expect(JSON.parse(written)).toEqual({ pressure: { prepare_percent: 70 }, auto_start: false, validation: { command: 'npm test' } });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect((await config(stateDir, 'get', 'pressure')).json.data?.['value']).toEqual({
      prepare_percent: 70,
      evacuate_percent: 90,
      hysteresis_percent: 5,
      freshness_seconds: 600,
      count_limit_families: [],
    });

    // A value the daemon would refuse, and a key it does not know: refused, the file as it was.
    const refused = await config(stateDir, 'set', 'pressure.prepare_percent', '95');
    expect([refused.code, refused.json.code]).toEqual([65, 'invalid_config']);
    expect([(await config(stateDir, 'set', 'nope', '1')).code, (await config(stateDir, 'set', 'pressure', '{}')).code]).toEqual([64, 64]);
    expect(readFileSync(file, 'utf8')).toBe(written);
  });
});
