import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, type CliResult } from '../support/daemon.js';
import { tempDir } from '../support/git.js';

/**
 * Issue 23, attack 6, through the real command: `handoff service install` with a newline in PATH or
 * in --state-dir answers 64 with the value named, and writes nothing (no unit, no state dir).
 */
function install(home: string, stateDir: string, path: string, dryRun: boolean): Promise<CliResult> {
  return new Promise((resolve) => {
    const argv = [CLI, '--state-dir', stateDir, 'service', 'install', ...(dryRun ? ['--dry-run'] : []), '--json'];
    execFile(process.execPath, argv, { env: { ...process.env, HOME: home, PATH: path }, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr, json: JSON.parse(stdout) as CliResult['json'] });
    });
  });
}

const INJECTED = '\nExecStartPre=/bin/sh -c "touch /tmp/owned"';

describe.runIf(process.platform === 'linux' || process.platform === 'darwin')('handoff service install refuses control characters', () => {
  const cases = [
    { what: 'PATH', path: `${process.env['PATH'] ?? '/usr/bin'}${INJECTED}`, stateDir: (parent: string) => join(parent, 'state'), named: /^PATH holds/ },
    { what: '--state-dir', path: process.env['PATH'] ?? '/usr/bin', stateDir: (parent: string) => join(parent, `state${INJECTED}`), named: /^the state dir/ },
  ];
  for (const item of cases) {
    for (const dryRun of [true, false]) {
      it(`a newline in ${item.what}${dryRun ? ' (--dry-run)' : ''}: exit 64, the value named, nothing written`, async () => {
        const home = tempDir('home');
        const parent = tempDir('state-parent');
        const result = await install(home, item.stateDir(parent), item.path, dryRun);
        expect([result.code, result.json.code]).toEqual([64, 'usage_error']);
        expect(result.json.error?.message).toMatch(item.named);
        expect(result.json.error?.hint).toMatch(/nothing was written/);
        expect(existsSync(join(home, '.config'))).toBe(false);
        expect(existsSync(join(home, 'Library'))).toBe(false);
        expect(existsSync(item.stateDir(parent))).toBe(false);
      });
    }
  }
});
